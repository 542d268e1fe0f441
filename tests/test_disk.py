"""The kernel's virtio-blk driver and the disk interface process, checked
against disk images made and read on the host. Disk 0 is the system disk
(the file system, with /bin); the raw disk under test is disk 1, served by
its own disk interface process, "di1"."""
import hashlib
import os
import re
import shutil
import tempfile
from harness import Node, SYSTEM_DISK, disk_args, fnv1a, make_image as make_fs_image, qemu_command, run_make

BLOCK = 4096
workdir = tempfile.mkdtemp(prefix="dm-disk-")
node = None


def teardown():
    if node:
        node.kill()
    shutil.rmtree(workdir, ignore_errors=True)



def make_image(name, blocks, seed):
    path = os.path.join(workdir, name)
    data = b"".join(hashlib.sha256(b"%d-%d" % (seed, i)).digest() for i in range(blocks * BLOCK // 32))
    with open(path, "wb") as f:
        f.write(data)
    return path, data



image, content = make_image("disk0.img", 256, 1)


SYSTEM = disk_args(SYSTEM_DISK, 0, snapshot=True)


def booted():
    global node
    if node is None:
        node = Node(extra=SYSTEM + disk_args(image, 1))
    return node


def test_kernel_finds_the_disk_and_the_disk_interface_runs():
    n = booted()
    assert "disk 1: 256 blocks of 4096 bytes" in n.output, n.output[:500]
    ps = n.command("ps")
    assert re.search(r"\sdi\s+receiving", ps) and len(re.findall(r"\sdi\s", ps)) == 2, ps
    assert n.command("run disktest -d di1 info") == "blocks 256\n"
    assert n.command("run disktest info") == "blocks 8192\n"   # the 32 MiB system disk


def test_blocks_read_are_the_image_blocks():
    out = booted().command("run disktest -d di1 read 0 8")
    got = re.findall(r"block (\d+) fnv ([0-9a-f]+)", out)
    assert len(got) == 8, out
    for b, h in got:
        b = int(b)
        assert h == fnv1a(content[b * BLOCK:(b + 1) * BLOCK]), "block %d differs" % b
    last = booted().command("run disktest -d di1 read 255 1")
    assert fnv1a(content[255 * BLOCK:]) in last, last


def test_reads_sent_without_waiting_are_answered_over_their_links_in_order():
    """DI_READs sent with SEND (no reply link), eight at once, the last two
    past the end: each is answered over the link it passed, in the order
    sent, with its block or its error (struct di_read_done), and counted."""
    n = booted()
    before = re.search(r"reads (\d+) writes (\d+) errors (\d+)", n.command("run disktest -d di1 stats"))
    out = n.command("run disktest -d di1 sent 250 8")
    got = re.findall(r"^block (\d+):? (?:fnv ([0-9a-f]+)|(E_\w+))$", out, re.M)
    assert [int(b) for b, _, _ in got] == list(range(250, 258)), out
    for b, h, err in got[:6]:
        assert h == fnv1a(content[int(b) * BLOCK:(int(b) + 1) * BLOCK]), "block %s differs:\n%s" % (b, out)
    assert [err for _, _, err in got[6:]] == ["E_BOUNDS", "E_BOUNDS"] and "exit status 1" in out, out
    after = re.search(r"reads (\d+) writes (\d+) errors (\d+)", n.command("run disktest -d di1 stats"))
    assert int(after.group(1)) == int(before.group(1)) + 6 and int(after.group(3)) == int(before.group(3)) + 2


def test_read_past_the_end_is_an_error():
    out = booted().command("run disktest -d di1 read 256 1")
    assert "block 256: E_BOUNDS" in out and "exit status 1" in out, out


def test_blocks_written_reach_the_image_and_counters_are_exact():
    global node
    n = booted()
    before = re.search(r"reads (\d+) writes (\d+) errors (\d+)", n.command("run disktest -d di1 stats"))
    assert n.command("run disktest -d di1 write 17 5") == "block 17 written\n"
    assert n.command("run disktest -d di1 write 200 6") == "block 200 written\n"
    n.command("run disktest -d di1 read 17 1")
    after = re.search(r"reads (\d+) writes (\d+) errors (\d+)", n.command("run disktest -d di1 stats"))
    assert int(after.group(1)) == int(before.group(1)) + 1
    assert int(after.group(2)) == int(before.group(2)) + 2
    assert n.halt() == 0
    node = None
    data = open(image, "rb").read()
    for b, seed in ((17, 5), (200, 6)):
        want = bytes(((i * 31 + seed) ^ (i >> 8)) & 0xff for i in range(BLOCK))
        assert data[b * BLOCK:(b + 1) * BLOCK] == want, "block %d not as written" % b
    untouched = [b for b in range(256) if b not in (17, 200)]
    assert all(data[b * BLOCK:(b + 1) * BLOCK] == content[b * BLOCK:(b + 1) * BLOCK] for b in untouched)


def test_several_disks_are_found():
    second, _ = make_image("disk1.img", 64, 2)
    with Node(extra=SYSTEM + disk_args(image, 1) + disk_args(second, 2)) as n:
        assert "disk 1: " in n.output and "disk 2: " in n.output, n.output[:500]
        assert n.command("run disktest -d di1 info") in ("blocks 256\n", "blocks 64\n")
        assert n.command("run disktest -d di2 info") in ("blocks 256\n", "blocks 64\n")
        assert n.command("run disktest -d di3 info").startswith("disktest: no disk interface di3")
        n.halt()


def test_make_run_attaches_a_disk():
    small = make_fs_image(os.path.join(workdir, "run.img"), 8)   # /bin and little more
    status, out = run_make("run", "DISK=" + small, input=b"run disktest info\nhalt\n")
    assert status == 0 and "blocks %d" % (8 * 256) in out, out


def test_a_modeled_service_time_bounds_every_request():
    """disk.service_us=2000 (make run DISK_SERVICE_US, the experiments' 100):
    each request to disk 0 is answered no sooner than 2 ms of machine time
    after it started, so fsbench's 64 reads through the disk interface alone
    take at least 128 ms of machine time: at most 4096 bytes / 2 ms = 2.05
    MB/s, where the emulated disk alone gives 20 to 500 (README, benchmarks).
    The file written and read back is intact."""
    fs_image = make_fs_image(os.path.join(workdir, "service.img"), 8)
    command = qemu_command(extra=disk_args(fs_image), bootargs="disk.service_us=2000")
    with Node(command=command) as n:
        assert "disk 0: every request takes at least 2000 us (disk.service_us)" in n.output, n.output[:600]
        out = n.command("run fsbench 256", timeout=120)
        assert n.halt() == 0
    read = re.search(r"^BENCH di_seq_read_MBps (\d+\.\d\d) MB/s$", out, re.M)
    assert read and 0 < float(read.group(1)) <= 2.05, out
    assert re.search(r"written (\S+), read \1, disk \1", out), out
