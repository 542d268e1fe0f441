"""Durability (docs/fs-design.md, "Consistency"): what a power-off leaves on
the disk with and without `sync`, the superblock's CLEAN and MOUNTED state,
and the check the disk interface runs at start when the file system was
not cleanly unmounted. A power-off is QEMU killed (node.kill()), no halt."""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from cluster import Cluster
from harness import BIN, Node, ROOT, SYSTEM_DISK, disk_args, fnv1a, make_image

BLOCK = 4096
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
DPM = os.path.join(ROOT, "build", "tools", "dpm")
workdir = tempfile.mkdtemp(prefix="dm-durable-")
STATE_CLEAN, STATE_MOUNTED = 1, 2
CHECKING = "di: file system not cleanly unmounted; checking\n"
INODE = struct.Struct("<HHIQQ12III12I")


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)


def dmfs(*args):
    """Runs dmfs; returns (exit status, stdout bytes, stderr text)."""
    r = subprocess.run([DMFS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def mkfs(name, size_mb, files=()):
    """A new image holding /bin and `files`, a list of (path in the image, bytes)."""
    image = os.path.join(workdir, name)
    specs = []
    for i, (path, data) in enumerate(files):
        host = os.path.join(workdir, "%s.%d" % (name, i))
        open(host, "wb").write(data)
        specs.append("%s=%s" % (host, path))
    return make_image(image, size_mb, *specs)


def state(image):
    with open(image, "rb") as f:
        return struct.unpack_from("<13I", f.read(64))[12]


def assert_consistent(image):
    status, out, err = dmfs("check", image)
    assert status == 0 and b": clean: " in out, (out, err)


def host_get(image, path):
    status, out, err = dmfs("get", image, path)
    assert status == 0, err
    return out


def pattern(n, seed):
    """The bytes `fstest write` writes."""
    return bytes((((i * 131 + seed) ^ (i >> 11)) & 0xff) for i in range(n))


PROGRAMS = len(os.listdir(BIN))   # the files in /bin of every image


def boot(image):
    return Node(extra=disk_args(image))


def boot_messages(node):
    """What the disk interface said at start."""
    return [l for l in node.output.splitlines() if l.startswith("di: ")]


# ---------------------------------------------------------------- state


def test_a_clean_halt_marks_the_disk_clean_and_the_next_start_does_not_check():
    image = mkfs("state.img", 8)
    assert state(image) == STATE_CLEAN
    with boot(image) as n:
        assert boot_messages(n) == []
        assert state(image) == STATE_MOUNTED, "marked MOUNTED while in use"
        assert n.command("mkdir /d") == ""
        assert n.halt() == 0
    assert state(image) == STATE_CLEAN
    assert_consistent(image)
    with boot(image) as n:
        assert boot_messages(n) == [], "a clean disk is not checked"
        assert n.command("ls") == "bin\nd\n"
        n.kill()
    assert state(image) == STATE_MOUNTED, "a power-off leaves it MOUNTED"
    with boot(image) as n:
        assert CHECKING in n.output
        assert "di: check: clean: %d files, 3 directories" % PROGRAMS in boot_messages(n)
        assert n.halt() == 0
    assert_consistent(image)


def test_a_change_after_the_final_sync_marks_the_disk_mounted_again():
    image = mkfs("final.img", 8)
    with boot(image) as n:
        assert "finalsync: done" in n.command("run bmtest finalsync")
        assert state(image) == STATE_CLEAN
        assert_consistent(image)
        assert "finalsync: done" in n.command("run bmtest finalsync")
        assert n.command("mkdir /after") == ""
        assert state(image) == STATE_MOUNTED, "marked before the change can reach the disk"
        assert re.search(r"superblock 2\n", n.command("fsstat")), "CLEAN once, MOUNTED once"
        n.kill()
    with boot(image) as n:
        assert CHECKING in n.output
        assert n.halt() == 0
    assert_consistent(image)


def test_a_halt_while_programs_write_leaves_the_disk_clean():
    """Writers still at work when `halt` comes, one on machine 1 and one on
    machine 0 (and a filter, whose flush at halt keeps the process manager
    waiting while they run): what reached the file system before its final
    sync is on the disk, whatever comes after is refused, and the disk is
    CLEAN and consistent."""
    image = mkfs("writers.img", 16)
    with Cluster(2, disk=image, trace_disks=os.path.join(workdir, "writers-traces")) as c:
        c.wait_joined()
        n = c.node(0)
        n.command("filter start @1 t - -")
        n.command("meter -F t run ping 1000000 &")
        n.command("run @1 fsseq /remote 4096 50 &")
        n.command("run fsseq /local 4096 50 &")
        time.sleep(1.5)
        n.type("halt\n")
        n.read_to_end(60)
        assert n.proc.wait() == 0
        assert c.node(1).proc.wait(30) == 0
    assert state(image) == STATE_CLEAN, "halt left the disk MOUNTED"
    assert_consistent(image)


def test_a_filters_log_file_is_written_before_the_halts_final_sync():
    """A filter logging into a file of the file system writes its log out at
    halt before the file system's final sync: the disk is CLEAN and the file
    holds every record the kernel made."""
    image = mkfs("filterlog.img", 8)
    with Cluster(1, disk=image, trace_disks=os.path.join(workdir, "filterlog-traces")) as c:
        n = c.node(0)
        assert "logging to trace disk (16384 blocks) and /t.log" in n.command("filter start t - - /t.log")
        assert "all answered" in n.command("meter -F t run ping 300")
        n.type("halt\n")
        made = int(re.search(r"machine 0: meter: (\d+) records, ", n.read_to_end(60)).group(1))
    assert state(image) == STATE_CLEAN, "halt left the disk MOUNTED"
    assert_consistent(image)
    log = os.path.join(workdir, "filter.log")
    open(log, "wb").write(host_get(image, "/t.log"))
    stats = subprocess.run([DPM, "stats", log], capture_output=True, text=True, timeout=60)
    assert re.search(r"^%d records, 0 lost" % made, stats.stdout, re.M), (made, stats.stdout[:300], stats.stderr)


def test_a_disk_without_a_file_system_is_left_alone():
    """A second disk holding no file system: its disk interface ("di1")
    neither checks nor marks it."""
    raw = os.path.join(workdir, "raw.img")
    open(raw, "wb").write(bytes(1 << 20))
    with Node(extra=disk_args(SYSTEM_DISK, 0, snapshot=True) + disk_args(raw, 1)) as n:
        assert boot_messages(n) == []
        assert re.search(r"\sdi\s+receiving", n.command("ps"))
        assert n.halt() == 0
    assert open(raw, "rb").read() == bytes(1 << 20)


# ---------------------------------------------------------------- power-off


SYNCED = (("/keep/small", 1000, 1), ("/keep/mid", 100000, 2), ("/big", 700000, 3))


def test_synced_files_survive_a_power_off():
    image = mkfs("synced.img", 16)
    with boot(image) as n:
        assert n.command("mkdir /keep") == ""
        for path, size, seed in SYNCED:
            assert "wrote %d bytes" % size in n.command("run fstest write %s %d %d 5000" % (path, size, seed))
        assert n.command("sync") == ""
        n.kill()
    status, out, _ = dmfs("check", image)
    assert status == 1 and out.decode().splitlines()[:-1] == [
        "dmfs: %s: superblock: state is MOUNTED (not cleanly unmounted, or in use)" % image], out
    for path, size, seed in SYNCED:
        assert host_get(image, path) == pattern(size, seed), path
    with boot(image) as n:
        assert CHECKING in n.output
        assert "di: check: clean: %d files, 3 directories" % (PROGRAMS + 3) in boot_messages(n)
        for path, size, seed in SYNCED:
            out = n.command("run fstest read %s 4096" % path)
            assert "size %d read %d fnv %s" % (size, size, fnv1a(pattern(size, seed))) in out, (path, out)
        assert n.halt() == 0
    assert_consistent(image)


def test_a_power_off_while_writing_is_repaired_at_the_next_start():
    """fswriter creates, writes, removes and now and then syncs files until
    QEMU is killed, at several points; each next start checks and repairs,
    serves the files, and a halt leaves what the host finds consistent."""
    notes = b"written by the host before any power-off\n"
    image = mkfs("writing.img", 16, [("/notes.txt", notes)])
    for i, delay in enumerate((0.2, 0.7, 1.5, 3.0)):
        with boot(image) as n:
            n.type("run fswriter /w%d 300000 3 &\n" % i)
            n.expect("fswriter: writing", 30)
            time.sleep(delay)
            n.kill()
        assert state(image) == STATE_MOUNTED
        with boot(image) as n:
            said = boot_messages(n)
            assert CHECKING in n.output, n.output
            assert re.match(r"di: check: (clean|\d+ problems found, \d+ repaired, 0 not repairable)", said[-1]), said
            assert n.command("cat /notes.txt") == notes.decode()
            names = n.command("ls /").split()
            assert "notes.txt" in names, names
            for name in names:
                assert "not found" not in n.command("ls -l /" + name)
            assert n.halt() == 0
        assert_consistent(image)


# ---------------------------------------------------------------- repairs at start


def inode_offset(data, ino):
    return struct.unpack_from("<13I", data)[8] * BLOCK + ino * INODE.size


def root_entry(data, name):
    """(offset of the entry, inode) for `name` in the root (one block)."""
    block = INODE.unpack_from(data, inode_offset(data, 1))[5]
    for offset in range(block * BLOCK, (block + 1) * BLOCK, 64):
        ino, raw = struct.unpack_from("<I60s", data, offset)
        if ino and raw.split(b"\0")[0] == name.encode():
            return offset, ino
    raise KeyError(name)


def test_a_damaged_image_marked_mounted_is_repaired_at_start():
    """Damage of three kinds (dmfs check --repair's tests in test_tools.py
    have one each) repaired by the disk interface, which shares the checker."""
    a_data = bytes(range(256)) * (5 * BLOCK // 256)
    image = mkfs("damaged.img", 8, [("/a", a_data), ("/b", b"bee\n"), ("/d/c", b"inside d\n")])
    data = bytearray(open(image, "rb").read())
    a, b, d = root_entry(data, "a")[1], root_entry(data, "b")[1], root_entry(data, "d")[1]
    block_of_a = INODE.unpack_from(data, inode_offset(data, a))[5]
    bitmap = struct.unpack_from("<13I", data)[6] * BLOCK
    data[bitmap + block_of_a // 8] &= ~(1 << block_of_a % 8) & 0xff   # block of /a marked free
    struct.pack_into("<H", data, inode_offset(data, b) + 2, 5)          # /b's nlink 5
    struct.pack_into("<I", data, root_entry(data, "d")[0], 0)           # /d unreachable
    struct.pack_into("<I", data, 48, STATE_MOUNTED)
    open(image, "wb").write(data)
    with boot(image) as n:
        said = boot_messages(n)
        assert CHECKING in n.output
        for line in ("di: block bitmap: block %d marked free but in use (fixed: bit set)" % block_of_a,
                     "di: inode %d: nlink 5, should be 1 (fixed: nlink set to 1)" % b,
                     "di: inode %d: in use but not reachable from the root (fixed: linked as /lost+found/#%d)"
                     % (d, d),
                     "di: check: 3 problems found, 3 repaired, 0 not repairable"):
            assert line in said, (line, said)
        assert n.command("cat /lost+found/#%d/c" % d) == "inside d\n"
        assert n.command("cat /b") == "bee\n"
        assert n.halt() == 0
    assert_consistent(image)
    assert host_get(image, "/a") == a_data


def test_a_superblock_the_check_cannot_repair_does_not_stop_the_start():
    image = mkfs("layout.img", 8, [("/f", b"x\n")])
    data = bytearray(open(image, "rb").read())
    data_start = struct.unpack_from("<13I", data)[10]
    struct.pack_into("<I", data, 40, data_start + 1)
    struct.pack_into("<I", data, 48, STATE_MOUNTED)
    open(image, "wb").write(data)
    # With no file system there are no programs: the process manager says so
    # and powers the machine off; nothing crashes.
    n = Node(extra=disk_args(image), wait_prompt=False)
    try:
        n.expect(r"pm: cannot start the shell \(/bin/shell\): E_NOTFOUND; powering off", 30)
        assert n.proc.wait(timeout=30) == 1
        said = boot_messages(n)
        assert re.match(r"di: superblock: data_start is \d+, expected \d+", said[1]), said
        assert said[-1] == "di: check: 1 problems found, 0 repaired, 1 not repairable", said
        assert "bm: the superblock's layout is damaged; the file system is not served" in n.output
        assert "panic" not in n.output
    finally:
        n.kill()
    assert state(image) == STATE_MOUNTED, "left as it was, to be checked again"
