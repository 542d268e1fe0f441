#!/usr/bin/env python3
"""test.py -- run every test suite (tests/test_*.py), print each result and
each suite's time, and end with the line `N passed, N failed`.

    python3 scripts/test.py              every suite
    python3 scripts/test.py shell gdb    only tests/test_shell.py and tests/test_gdb.py

A suite is a module with functions test_NAME(report); each either returns
(passed) or raises (failed). A function may also report many results of its
own through report(name, ok, detail) -- the in-OS tests do, one per check.
"""
import importlib.util
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

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
            try:
                fn(report) if fn.__code__.co_argcount else fn()
                report("%s.%s" % (name, test_name[5:]), True)
            except Exception as e:
                detail = str(e) if isinstance(e, AssertionError) else traceback.format_exc()
                report("%s.%s" % (name, test_name[5:]), False, detail)
    finally:
        if hasattr(module, "teardown"):
            module.teardown()
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
