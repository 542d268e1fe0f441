"""The benchmark programs run and print every figure they promise, with
plausible values: fsbench on a small file (256 KiB) on a fresh image, whose
written file the host then checks byte for byte; callbench, whose client's
and server's PROCTIME (what scripts/bench.py compares metered and
unmetered) add up to the round trip."""
import os
import re
import shutil
import subprocess
import tempfile
from harness import Node, ROOT, disk_args, fnv1a, make_image

DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
workdir = tempfile.mkdtemp(prefix="dm-bench-")


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)


def fsbench_pattern(n):
    """The file fsbench writes: its pattern with its seed, 11."""
    return bytes((((i * 131 + 11) ^ (i >> 11)) & 0xff) for i in range(n))


def test_fsbench_prints_every_figure_and_writes_the_file():
    size = 256 * 1024
    image = os.path.join(workdir, "bench.img")
    make_image(image, 8)
    with Node(extra=disk_args(image)) as n:
        out = n.command("run fsbench 256", timeout=60)
        assert n.halt() == 0
    figures = {name: (float(value), unit) for name, value, unit in
               re.findall(r"^BENCH (\S+) (\d+\.\d\d) (\S+)$", out, re.M)}
    for what in ("fs_seq_write", "fs_seq_read", "di_seq_read"):
        assert figures.get(what + "_MBps", (0, ""))[1] == "MB/s", out
        assert figures.get(what + "_instr_per_byte", (0, ""))[1] == "instructions/byte", out
    assert len(figures) == 6, out
    assert all(value > 0 for value, _ in figures.values()), out
    # The disk interface alone must cost less per byte than the three processes over it.
    assert figures["di_seq_read_instr_per_byte"][0] < figures["fs_seq_read_instr_per_byte"][0], out
    # Each span: the PROCTIME of the file system's processes and fsbench's, within its instructions.
    spans = re.findall(r"^fsbench: [^:]*: (\d+) instructions;.*\nfsbench: [^:]*: PROCTIME: file system (\d+), "
                       r"fsbench (\d+)$", out, re.M)
    assert len(spans) == 3, out
    assert all(0 < int(fs) + int(me) < int(all_) for all_, fs, me in spans), spans
    want = fnv1a(fsbench_pattern(size))
    assert "written %s, read %s, disk %s" % (want, want, want) in out, out
    # The cache (64 blocks) is no larger than the file: every block read is a miss.
    assert "misses 64 hits 0 (file of 64 blocks)" in out, out
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0
    got = subprocess.run([DMFS, "get", image, "/fsbench"], check=True, stdout=subprocess.PIPE).stdout
    assert got == fsbench_pattern(size)


def test_callbench_prints_the_round_trip_and_its_proctime():
    """callbench's figures, and the client's and server's PROCTIME per
    round trip: together every instruction of an 8-byte round trip but a
    few (the kernel's share of a switch, the scheduler's, is theirs too)."""
    with Node() as n:
        out = n.command("run callbench 2000", timeout=60)
        assert n.halt() == 0
    figures = dict(re.findall(r"^BENCH (call_rtt_\w+) (\d+) (?:instructions|ns)$", out, re.M))
    assert set(figures) == {"call_rtt_8_instr", "call_rtt_8_ns", "call_rtt_1000_instr", "call_rtt_1000_ns"}, out
    for size in (8, 1000):
        m = re.search(r"^callbench: %d bytes: PROCTIME a round trip: client (\d+\.\d\d), server (\d+\.\d\d)$"
                      % size, out, re.M)
        assert m, out
        both, rtt = float(m.group(1)) + float(m.group(2)), int(figures["call_rtt_%d_instr" % size])
        assert float(m.group(1)) > 0 and float(m.group(2)) > 0 and abs(both - rtt) <= rtt / 50, (m.group(0), rtt)


def test_fsbench_refuses_a_size_that_is_not_whole_blocks():
    image = os.path.join(workdir, "usage.img")
    make_image(image, 8)
    with Node(extra=disk_args(image)) as n:
        assert "usage: fsbench" in n.command("run fsbench 5")
        n.halt()


def test_netbench_prints_the_delivery_table():
    """netbench on two nodes, with few exchanges: a figure for each size, local
    and remote, in guest time, the local instruction count, and the lines
    around each run that the host times (scripts/bench.py); a remote message
    costs more than a local one, and its instructions on both machines are
    counted, more for 1000 bytes than for 1."""
    from cluster import Cluster
    with Cluster(2) as cluster:
        cluster.wait_joined()
        out = cluster.node(0).command("run netbench 300 1", timeout=120)
        assert cluster.node(0).command("run netbench 300 0").startswith("usage: netbench")
    figures = dict(re.findall(r"^BENCH (\S+) (\d+(?:\.\d+)?) (?:us|instructions)$", out, re.M))
    for where in ("local", "remote"):
        for size in (1, 10, 100, 1000):
            assert float(figures.get("deliver_%s_%d_us" % (where, size), 0)) > 0, out
            assert re.search(r"^netbench: begin %s %d 600$" % (where, size), out, re.M), out
            assert re.search(r"^netbench: end %s %d$" % (where, size), out, re.M), out
    assert 100 < int(figures["deliver_local_1_instr"]) < 100000, out
    assert float(figures["deliver_remote_1_us"]) > float(figures["deliver_local_1_us"]), out
    for size in (1, 10, 100, 1000):
        shares = re.search(r"^netbench: remote %d: machine 0 ([\d.]+), machine 1 ([\d.]+) instructions a message$"
                           % size, out, re.M)
        assert shares and float(shares.group(1)) > 0 and float(shares.group(2)) > 0, out
        assert abs(float(shares.group(1)) + float(shares.group(2)) -
                   int(figures["deliver_remote_%d_instr" % size])) <= 1, out
    assert int(figures["deliver_local_1_instr"]) < int(figures["deliver_remote_1_instr"]), out
    assert int(figures["deliver_remote_1_instr"]) < int(figures["deliver_remote_1000_instr"]), out


def test_migbench_prints_every_figure():
    """migbench on three nodes, with one move of each size and a few
    forwarded CALLs: every figure it promises, a larger process costing
    more to move, each process as large as its heap at least, and a CALL
    forwarded once costing more than a direct one (the median of the
    rounds' differences)."""
    from cluster import Cluster
    with Cluster(3) as cluster:
        cluster.wait_joined()
        out = cluster.node(0).command("run migbench 1 31", timeout=300)
        assert cluster.node(0).command("run migbench 0").startswith("usage: migbench")
        assert "usage: migbench" in cluster.node(0).command("run @1 migbench 1 1")
    figures = {name: float(value) for name, value in
               re.findall(r"^BENCH (\S+) (-?\d+(?:\.\d+)?) (?:us|instructions)$", out, re.M)}
    sizes = (("64k", 64), ("1m", 1024), ("8m", 8192))
    assert sorted(figures) == sorted(["forward_extra_instr"] + ["migrate_%s_%s" % (tag, unit) for tag, _ in sizes
                                                                 for unit in ("us", "instr")]), out
    assert all(value > 0 for value in figures.values()), out
    for tag, kib in sizes:
        m = re.search(r"^migbench: a process of (\d+) KiB \(a heap of %d KiB\), moved 1 times" % kib, out, re.M)
        assert m and int(m.group(1)) > kib, out
    assert figures["migrate_64k_instr"] < figures["migrate_1m_instr"] < figures["migrate_8m_instr"], out
    # Moving 8 MiB more seals and copies every byte on both sides: several instructions a byte.
    assert figures["migrate_8m_instr"] - figures["migrate_1m_instr"] > 7 * 1024 * 1024 * 4, out
    assert re.search(r"^migbench: 31 CALLs forwarded once, -?\d+ instructions each; 31 direct", out, re.M), out
