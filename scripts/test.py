#!/usr/bin/env python3
"""test.py -- run every test suite (tests/test_*.py), print each result and
each suite's time, and end with the line `N passed, N failed`.

    python3 scripts/test.py              every suite
    python3 scripts/test.py shell gdb    only tests/test_shell.py and tests/test_gdb.py

A suite is a module with functions test_NAME(report); each either returns
(passed) or raises (failed). A function may also report many results of its
own through report(name, ok, detail) -- the in-OS tests do, one per check.
A test also fails when a node that runs after it has printed that its kernel
answered a request with an error demos.h does not list for it (harness.py,
check_live_nodes; the nodes a test ended were checked as they ended), and
so does a suite's teardown() (reported as SUITE.teardown).
"""
import importlib.util
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import harness  # noqa: E402  (found through the path above)

passed = failed = 0


def report(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("  ok      %s" % name)
    else:
        failed += 1
        print("  FAILED  %s%s" % (name, (": " + detail) if detail else ""))
    sys.stdout.flush()


def run_test(name, fn, report_success=True):
    """Run fn() and then check the nodes still running; report the test
    `name` failed if either raised (both reasons, if both did), else passed
    (unless not report_success)."""
    details = []
    for step in (fn, harness.check_live_nodes):
        try:
            step()
        except Exception as e:
            details.append(str(e) if isinstance(e, AssertionError) else traceback.format_exc())
    if details or report_success:
        report(name, not details, "\n".join(details))


def run_suite(path):
    name = os.path.basename(path)[5:-3]
    spec = importlib.util.spec_from_file_location("suite_" + name, path)
    module = importlib.util.module_from_spec(spec)
    print("suite %s" % name)
    sys.stdout.flush()
    start = time.monotonic()
    try:
        spec.loader.exec_module(module)
        tests = [(n, f) for n, f in vars(module).items() if n.startswith("test_") and callable(f)]
        tests.sort(key=lambda t: t[1].__code__.co_firstlineno)
        for test_name, fn in tests:
            run_test("%s.%s" % (name, test_name[5:]), lambda: fn(report) if fn.__code__.co_argcount else fn())
    finally:
        if hasattr(module, "teardown"):
            run_test("%s.teardown" % name, module.teardown, report_success=False)
    print("suite %s: %.1f s" % (name, time.monotonic() - start))
    sys.stdout.flush()


def main():
    wanted = sys.argv[1:]
    tests_dir = os.path.join(ROOT, "tests")
    suites = sorted(f for f in os.listdir(tests_dir) if f.startswith("test_") and f.endswith(".py"))
    names = [f[5:-3] for f in suites]
    if any(w in ("-h", "--help") for w in wanted):
        print(__doc__.strip())
        print("\nsuites: " + " ".join(names))
        return 0
    unknown = [w for w in wanted if w not in names]
    if unknown:
        print("test.py: no suite named %s (suites: %s)" % (", ".join(unknown), " ".join(names)), file=sys.stderr)
        return 2
    if wanted:
        suites = [f for f in suites if f[5:-3] in wanted]
    start = time.monotonic()
    for f in suites:
        run_suite(os.path.join(tests_dir, f))
    print("all suites: %.1f s" % (time.monotonic() - start))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
