#!/usr/bin/env python3
"""bench.py -- run every benchmark and print its BENCH lines.

Each benchmark boots a node (under -icount, so instruction counts are exact),
runs a benchmark program from the shell and passes on the lines
`BENCH <name> <value> <unit>` it prints. Host wall-clock time for each
benchmark is printed beside it, labelled.
"""
import sys
import time
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Node

BENCHMARKS = [
    ("local CALL round trip", "run callbench 20000"),
]


def main():
    failures = 0
    for title, command in BENCHMARKS:
        print("# %s: %s" % (title, command))
        start = time.monotonic()
        with Node() as node:
            out = node.command(command, timeout=600)
            node.halt()
        lines = [l for l in out.splitlines() if l.startswith("BENCH ")]
        if not lines:
            print("bench: %s printed no BENCH line:\n%s" % (command, out), file=sys.stderr)
            failures += 1
        for line in lines:
            print(line)
        print("# host wall-clock: %.1f s" % (time.monotonic() - start))
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
