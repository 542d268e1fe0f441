#!/usr/bin/env python3
"""bench.py -- run every benchmark and print its BENCH lines.

Each benchmark boots a node (under -icount), with a fresh disk image if it
needs one, runs a benchmark program from the shell and passes on the lines
`BENCH <name> <value> <unit>` it prints; its other lines follow as comments.
Host wall-clock time for each benchmark is printed beside it, labelled.
"""
import shutil
import sys
import tempfile
import time
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Node, disk_args, make_image


# (title, shell command, size in MiB of a fresh file-system image, or None)
BENCHMARKS = [
    ("local CALL round trip", "run callbench 20000", None),
    # 4 MiB file, its indirect blocks, /bin and the metadata: 16 MiB leaves room.
    ("sequential file-system and disk-interface throughput, 4 MiB", "run fsbench 4096", 16),
]


def run(command, image_mib, workdir):
    extra = []
    if image_mib:
        image = os.path.join(workdir, "bench.img")
        make_image(image, image_mib)
        extra = disk_args(image)
    with Node(extra=extra) as node:
        out = node.command(command, timeout=600)
        node.halt()
    return out


def main():
    failures = 0
    workdir = tempfile.mkdtemp(prefix="dm-bench-")
    try:
        for title, command, image_mib in BENCHMARKS:
            print("# %s: %s" % (title, command))
            start = time.monotonic()
            out = run(command, image_mib, workdir)
            lines = [l for l in out.splitlines() if l.startswith("BENCH ")]
            if not lines:
                print("bench: %s printed no BENCH line:\n%s" % (command, out), file=sys.stderr)
                failures += 1
            for line in lines:
                print(line)
            for line in out.splitlines():
                if line and not line.startswith("BENCH "):
                    print("#   " + line)
            print("# host wall-clock: %.1f s" % (time.monotonic() - start))
            sys.stdout.flush()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
