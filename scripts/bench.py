#!/usr/bin/env python3
"""bench.py -- run every benchmark and print its BENCH lines.

Each benchmark boots a node (under -icount), with a fresh disk image if it
needs one, runs a benchmark program from the shell and passes on the lines
`BENCH <name> <value> <unit>` it prints; its other lines follow as comments.
Host wall-clock time for each benchmark is printed beside it, labelled.

The delivery-time table (netbench) runs on a cluster of two nodes; the host
times each of its runs by the lines `netbench: begin WHERE SIZE MESSAGES` and
`netbench: end WHERE SIZE` as they come, and prints
`BENCH deliver_WHERE_SIZE_wall_us`: host microseconds per message. The guest
times are written as a network file, build/net/here.tsv (docs/analyzer.md,
"Networks"), for `dpm parallelism --network build/net/here.tsv`.

    python3 scripts/bench.py [NAME...]   every benchmark, or those whose
                                         program is named (callbench, fsbench, netbench, meterbench,
                                         migbench: moves and forwarding on 3 nodes,
                                         dpmstats: the host analyzer, scripts/dpmbench.py;
                                         authbench: a frame's seal, by the kernel at boot)
"""
import re
import shutil
import subprocess
import sys
import tempfile
import time
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Node, disk_args, make_image
from cluster import Cluster
import dpmbench


# (title, shell command, size in MiB of a fresh file-system image, or None)
BENCHMARKS = [
    ("local CALL round trip", "run callbench 20000", None),
    # 4 MiB file, its indirect blocks, /bin and the metadata: 16 MiB leaves room.
    ("sequential file-system and disk-interface throughput, 4 MiB", "run fsbench 4096", 16),
    ("delivery time per message, local and remote (2 nodes)", "run netbench 10000 1", "cluster"),
    ("an unmetered probe: the CALL round trip without and with the probes compiled in", "run callbench 20000",
     "probes"),
    ("the CALL round trip metered: the client's and the server's PROCTIME against unmetered",
     "run callbench 20000", "callmeter"),
    ("metering a message loop: records, their cost, the slowdown and its model", "run meterbench 20000", None),
    ("the file-system workload fully metered from boot, filter on the same and on another machine",
     "run fsbench 4096", "fsmeter"),
    ("the host analyzer: dpm stats, parallelism and critpath, clocks, waitstates and export of a million "
     "records (scripts/dpmbench.py)",
     "host dpmstats", "host"),
    ("a frame's seal: SipHash-2-4 tag written and checked, by the kernel at boot (boot argument net.authbench=1)",
     "boot authbench", "boot"),
    ("moving a process of 64 KiB, 1 MiB and 8 MiB between machines, and a message forwarded (3 nodes)",
     "run migbench 4 200", "cluster3"),
]

NOMETER_KERNEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "kernel-nometer.elf")
# The probe tests an unmetered CALL round trip passes (kernel/syscall.c,
# msg.c): the client's CALL, the server's RECEIVE, its SEND of the answer,
# and the delivery of the request and of the answer.
PROBES_PER_CALL_RTT = 5


def run_probes(command):
    """`command` (callbench) on the kernel without probes and on the real
    one; BENCH probe_unmetered_instr: the difference per round trip divided
    by the probes it passes."""
    rtt, out = {}, ""
    for name, kernel in (("without", NOMETER_KERNEL), ("with", None)):
        with Node(**({"kernel": kernel} if kernel else {})) as node:
            text = node.command(command, timeout=600)
            node.halt()
        m = re.search(r"BENCH call_rtt_8_instr (\d+)", text)
        if not m:
            return text
        rtt[name] = int(m.group(1))
        out += "call_rtt_8_instr %s probes: %d\n" % (name, rtt[name])
    out += "BENCH call_rtt_8_instr_without_probes %d instructions\n" % rtt["without"]
    out += "BENCH probe_unmetered_instr %.1f instructions\n" % ((rtt["with"] - rtt["without"]) / PROBES_PER_CALL_RTT)
    return out


CALL_PROCTIME = r"callbench: 8 bytes: PROCTIME a round trip: client ([\d.]+), server ([\d.]+)"


def run_call_metered(command, workdir):
    """`command` (callbench) unmetered, then metered with every event into a
    filter on the same machine (its server, a child, is metered with it);
    BENCH meter_proctime_perturbation_call_pct: the rise in the client's and
    the server's PROCTIME per 8-byte round trip. Metering's work is the
    kernel's, so it should not show there."""
    out, proctime = "", {}
    with Cluster(1, trace_disks=os.path.join(workdir, "traces-call")) as cluster:
        node = cluster.node(0)
        out += node.command("filter start cb - -", timeout=60)
        for name, line in (("unmetered", command), ("metered", "meter -F cb " + command)):
            text = node.command(line, timeout=600)
            out += re.sub(r"^BENCH ", "%s: " % name, text, flags=re.M)   # the figures of callbench's own run
            m = re.search(CALL_PROCTIME, text)
            if not m:
                return out
            proctime[name] = float(m.group(1)) + float(m.group(2))
            out += "callbench %s: %.2f instructions of PROCTIME a round trip\n" % (name, proctime[name])
        node.type("halt\n")
        node.expect(r"machine 0: halted\n", timeout=60)
    out += "BENCH meter_proctime_perturbation_call_pct %.2f %%\n" % (
        100 * (proctime["metered"] / proctime["unmetered"] - 1))
    return out


def run_cluster(command):
    """Run `command` on node 0 of a 2-node cluster; time each `netbench: begin`
    .. `end` span by the host's clock as the lines arrive; return the output
    with the wall-clock BENCH lines added."""
    with Cluster(2) as cluster:
        cluster.wait_joined()
        node = cluster.node(0)
        node.type(command + "\n")
        extra, begun = [], {}
        while True:
            m = node.expect(r"netbench: (begin|end) (\w+) (\d+)(?: (\d+))?\n|\n\$ ", 900)
            if m.group(1) == "begin":
                begun[(m.group(2), m.group(3))] = (time.monotonic(), int(m.group(4)))
            elif m.group(1) == "end":
                start, messages = begun[(m.group(2), m.group(3))]
                us = (time.monotonic() - start) * 1e6 / messages
                extra.append("BENCH deliver_%s_%s_wall_us %.1f us" % (m.group(2), m.group(3), us))
            else:
                break
        out = node.output
        node.halt()
    return out + "\n" + "\n".join(extra) + "\n" + write_delivery_table(out) + "\n"


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE_TABLE = os.path.join(ROOT, "build", "net", "here.tsv")


def write_delivery_table(out):
    """netbench's guest times per message (its BENCH deliver_WHERE_SIZE_us
    lines) as a network file (docs/analyzer.md, "Networks") in
    build/net/here.tsv; returns a line saying so, or why not."""
    rows = {}
    for where, size, us in re.findall(r"BENCH deliver_(local|remote)_(\d+)_us ([\d.]+) us", out):
        rows.setdefault(int(size), {})[where] = int(round(float(us) * 1000))
    if not rows or any(len(r) != 2 for r in rows.values()):
        return "bench: no delivery-time table: netbench did not give both times for every size"
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    os.makedirs(os.path.dirname(HERE_TABLE), exist_ok=True)
    with open(HERE_TABLE, "w") as f:
        f.write("# title: this system: QEMU riscv64 nodes under -icount, a VDE switch between them\n"
                "# Measured by `make bench` (scripts/bench.py netbench) on %s at commit %s: `run netbench\n"
                "# 10000 1` on two nodes, 10,000 CALL exchanges per size after 1,000 warm-up ones; a\n"
                "# message takes half an exchange, in guest ns (the machine clock).\n"
                "# SIZE LOCAL_NS REMOTE_NS\n" % (time.strftime("%Y-%m-%d"), commit or "?"))
        for size in sorted(rows):
            f.write("%d\t%d\t%d\n" % (size, rows[size]["local"], rows[size]["remote"]))
    return "the delivery-time table: %s" % HERE_TABLE


def filter_figures(node):
    """The filter fstrace's records received so far (`filter stats`) and the
    instructions charged to it so far (its CPU column in `ps`)."""
    stats = node.command("filter stats fstrace")
    ps = node.command("ps")
    received = re.search(r"filter fstrace: \d+ batches, (\d+) records received", stats)
    cpu = re.search(r"^\S+ +filter +\S+ +\d+ +(\d+) ", ps, re.M)
    return (int(received.group(1)) if received else None, int(cpu.group(1)) if cpu else None, stats.strip())


def run_fs_metered(command, workdir):
    """fsbench on a fresh image, unmetered and with the file system metered
    from boot (meter.fs) into a filter on machine 0 and on machine 1 (two
    nodes each time, so that only the metering differs); BENCH
    meter_slowdown_fs_{local,remote}_pct: the rise in instructions per byte
    written and read, counted on machine 0 (where the file system runs).
    Where it goes: BENCH meter_fs_records_per_block, the records the
    workload makes for each block it moves (written, read through the file
    system, read through the disk interface); meter_fs_{local,remote}_
    instr_per_record, what a record costs machine 0 in all (the rise in
    the instructions of the three phases, over the records); and
    meter_fs_filter_instr_per_record, the filter's share of that (local).
    BENCH meter_proctime_perturbation_fs_pct (filter on the same machine)
    and ..._fs_remote_pct: the rise in the PROCTIME of the processes that
    do the work (the file system's four and fsbench) over the three phases.
    Metering's work is the kernel's, so it should not show there."""
    out, per_byte, phases, records, workload = "", {}, {}, {}, {}
    for name, meter_fs in (("unmetered", None), ("local", 0), ("remote", 1)):
        image = os.path.join(workdir, "fs-%s.img" % name)
        make_image(image, 16)
        traces = os.path.join(workdir, "traces-%s" % name)
        with Cluster(2, disk=image, trace_disks=traces, meter_fs=meter_fs) as cluster:
            cluster.wait_joined()
            node = cluster.node(0)
            if meter_fs is not None:
                before = filter_figures(node)
            text = node.command(command, timeout=900)
            if meter_fs is not None:
                after = filter_figures(node)
                text += after[2] + "\n"
            node.type("halt\n")
            node.expect(r"machine 0: halted\n", timeout=60)
        figures = dict(re.findall(r"BENCH fs_seq_(write|read)_instr_per_byte ([\d.]+)", text))
        spans = re.findall(r"fsbench: [^:]*: (\d+) instructions;", text)
        proctimes = re.findall(r"fsbench: [^:]*: PROCTIME: file system (\d+), fsbench (\d+)", text)
        blocks = re.search(r"(\d+) bytes in \d+-byte requests", text)
        if len(figures) != 2 or len(spans) != 3 or len(proctimes) != 3 or not blocks:
            return out + text
        per_byte[name] = float(figures["write"]) + float(figures["read"])
        phases[name] = sum(int(n) for n in spans)
        workload[name] = sum(int(fs) + int(me) for fs, me in proctimes)
        out += "fsbench %s: %s instructions/byte written, %s read; %d instructions in its three phases, " \
               "%d of them the PROCTIME of the file system and fsbench\n" % (
                   name, figures["write"], figures["read"], phases[name], workload[name])
        if meter_fs is not None:
            out += after[2] + "\n"
            if None in before[:2] or None in after[:2]:
                return out + "bench: no filter figures in `filter stats` or `ps`\n"
            records[name] = after[0] - before[0]
            if name == "local":
                filter_per_record = (after[1] - before[1]) / records[name]
            block_count = 3 * int(blocks.group(1)) // 4096
    for name in ("local", "remote"):
        out += "BENCH meter_slowdown_fs_%s_pct %.1f %%\n" % (name, 100 * (per_byte[name] / per_byte["unmetered"] - 1))
    out += "BENCH meter_fs_records_per_block %.1f records\n" % (records["local"] / block_count)
    for name in ("local", "remote"):
        out += "BENCH meter_fs_%s_instr_per_record %.0f instructions\n" % (
            name, (phases[name] - phases["unmetered"]) / records[name])
    out += "BENCH meter_fs_filter_instr_per_record %.0f instructions\n" % filter_per_record
    out += "BENCH meter_fs_unmetered_instr_per_block %.0f instructions\n" % (phases["unmetered"] / block_count)
    for name, suffix in (("local", ""), ("remote", "_remote")):
        out += "BENCH meter_proctime_perturbation_fs%s_pct %.2f %%\n" % (
            suffix, 100 * (workload[name] / workload["unmetered"] - 1))
    return out


def run_authbench():
    """What a node's kernel prints when booted with net.authbench=1 (kernel/net/
    cluster.c, auth_bench): BENCH frame_auth_instr, the instructions to seal
    and check a 1,514-byte frame, and frame_auth_min_instr, a 60-byte one."""
    with Node(bootargs="net.authbench=1") as node:
        out = node.output
        node.halt()
    return out


def run_migbench(command):
    """`command` (migbench) on node 0 of a 3-node cluster: the moves go
    between machines 1 and 2 (user/bench/migbench.c)."""
    with Cluster(3) as cluster:
        cluster.wait_joined()
        node = cluster.node(0)
        out = node.command(command, timeout=900)
        node.halt()
    return out


def run(command, image_mib, workdir):
    if image_mib == "cluster3":
        return run_migbench(command)
    if image_mib == "host":
        return dpmbench.run()
    if image_mib == "cluster":
        return run_cluster(command)
    if image_mib == "probes":
        return run_probes(command)
    if image_mib == "fsmeter":
        return run_fs_metered(command, workdir)
    if image_mib == "boot":
        return run_authbench()
    if image_mib == "callmeter":
        return run_call_metered(command, workdir)
    extra = []
    if image_mib:
        image = os.path.join(workdir, "bench.img")
        make_image(image, image_mib)
        extra = disk_args(image)
    with Node(extra=extra) as node:
        out = node.command(command, timeout=600)
        node.halt()
    return out


def build():
    """Build what the benchmarks run: the system and its disk, and the
    kernel without probes (make does nothing when they are up to date)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for target in ("build", "build/kernel-nometer.elf"):
        if subprocess.run(["make", "--no-print-directory", "-C", root, target]).returncode != 0:
            print("bench: make %s failed" % target, file=sys.stderr)
            return False
    return True


def main():
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        return 0
    if not build():
        return 1
    failures = 0
    workdir = tempfile.mkdtemp(prefix="dm-bench-")
    try:
        wanted = sys.argv[1:]
        for title, command, image_mib in BENCHMARKS:
            if wanted and command.split()[1] not in wanted:
                continue
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
