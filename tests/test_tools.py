"""dmfs, the host tool for file-system images (tools/dmfs.c): make an image,
list it, copy files in and out (through the indirect and double-indirect
levels), run it full, and check and repair images damaged by editing their
bytes here, each damage reported with its own message."""
import os
import random
import re
import shutil
import struct
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The sanitized build (address and undefined behaviour): the same tool,
# stopped at the first memory error or undefined behaviour. A one-shot tool
# leaves its memory to the exit, so leaks are not reported.
DMFS = os.path.join(ROOT, "build", "tools", "dmfs-sanitized")
SANITIZER_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
BLOCK = 4096
workdir = tempfile.mkdtemp(prefix="dm-tools-")

# The on-disk structures of user/lib/fs_format.h, to read and damage images here.
SUPERBLOCK = struct.Struct("<16I")
INODE = struct.Struct("<HHIQQ12III12I")
DIRENT = struct.Struct("<I60s")
SB_FIELDS = ("magic", "version", "block_count", "inode_count", "inode_bitmap_start",
             "inode_bitmap_blocks", "block_bitmap_start", "block_bitmap_blocks",
             "inode_table_start", "inode_table_blocks", "data_start", "root_inode", "state")
FS_MAGIC, STATE_CLEAN, STATE_MOUNTED = 0x53464D44, 1, 2
TYPE_FILE, TYPE_DIR = 1, 2

subprocess.run(["make", "-s", "--no-print-directory", "build/tools/dmfs-sanitized"], cwd=ROOT, check=True)


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)


def path(name):
    return os.path.join(workdir, name)


def content(size, seed):
    return random.Random(seed).randbytes(size)


def host_file(name, data):
    p = path(name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def dmfs(*args):
    """Runs dmfs; returns (exit status, stdout bytes, stderr text)."""
    r = subprocess.run([DMFS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, env=SANITIZER_ENV)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def ok(*args):
    status, out, err = dmfs(*args)
    assert status == 0, "dmfs %s: status %d: %s" % (" ".join(args), status, err)
    return out


def fails(status_wanted, pattern, *args):
    """Runs dmfs expecting exit status status_wanted and pattern in its messages."""
    status, out, err = dmfs(*args)
    text = out.decode(errors="replace") + err
    assert status == status_wanted, "dmfs %s: status %d, expected %d: %s" % (
        " ".join(args), status, status_wanted, text)
    assert re.search(pattern, text), "dmfs %s: %r not in %r" % (" ".join(args), pattern, text)
    return text


def check(image, *options):
    """Runs dmfs check; returns (status, its output lines)."""
    status, out, err = dmfs("check", *options, image)
    assert err == "", err
    lines = out.decode().splitlines()
    assert lines and all(l.startswith("dmfs: %s: " % image) for l in lines), lines
    return status, lines


def assert_clean(image):
    status, lines = check(image)
    assert status == 0 and len(lines) == 1 and ": clean: " in lines[0], lines


def ls(image, *args):
    """The lines of `dmfs ls OPTIONS IMAGE [PATH]`; args are the options, then the path."""
    options = [a for a in args if a.startswith("-")]
    rest = [a for a in args if not a.startswith("-")]
    return ok("ls", *options, image, *rest).decode().splitlines()


class Image:
    """An image's bytes, parsed enough to read and damage them."""

    def __init__(self, file):
        self.file = file
        self.data = bytearray(open(file, "rb").read())
        self.sb = dict(zip(SB_FIELDS, SUPERBLOCK.unpack_from(self.data, 0)))

    def save(self):
        with open(self.file, "wb") as f:
            f.write(self.data)

    def inode_offset(self, ino):
        return self.sb["inode_table_start"] * BLOCK + ino * INODE.size

    def inode(self, ino):
        f = INODE.unpack_from(self.data, self.inode_offset(ino))
        return {"type": f[0], "nlink": f[1], "size": f[3], "direct": list(f[5:17]),
                "indirect": f[17], "double_indirect": f[18]}

    def set_inode(self, ino, **changes):
        f = list(INODE.unpack_from(self.data, self.inode_offset(ino)))
        for k, v in changes.items():
            if k == "direct":
                f[5:17] = v
            else:
                f[{"type": 0, "nlink": 1, "size": 3, "indirect": 17, "double_indirect": 18}[k]] = v
        INODE.pack_into(self.data, self.inode_offset(ino), *f)

    def bit(self, start_field, i):
        offset = self.sb[start_field] * BLOCK + i // 8
        return self.data[offset] >> (i % 8) & 1

    def set_bit(self, start_field, i, value):
        offset = self.sb[start_field] * BLOCK + i // 8
        self.data[offset] = (self.data[offset] & ~(1 << i % 8)) | (value << i % 8)

    def entries(self, dino):
        """(offset of the entry, inode, name) for each entry of a small directory."""
        ip = self.inode(dino)
        out = []
        for i in range(ip["size"] // DIRENT.size):
            offset = ip["direct"][i // 64] * BLOCK + (i % 64) * DIRENT.size
            ino, name = DIRENT.unpack_from(self.data, offset)
            out.append((offset, ino, name.split(b"\0")[0].decode()))
        return out

    def entry(self, dino, name):
        return [e for e in self.entries(dino) if e[1] and e[2] == name][0]

    def lookup(self, p):
        ino = 1
        for part in p.strip("/").split("/"):
            ino = self.entry(ino, part)[1]
        return ino

    def set_entry_inode(self, dino, name, ino):
        offset = self.entry(dino, name)[0]
        struct.pack_into("<I", self.data, offset, ino)


# ---------------------------------------------------------------- usage


def test_help_documents_every_command_and_the_exit_statuses():
    out = ok("--help").decode()
    for word in ("SYNOPSIS", "mkfs", "ls", "get", "put", "mkdir", "rm", "check [--repair]",
                 "REPAIR POLICY", "lost+found", "EXIT STATUS"):
        assert word in out, word
    assert ok("check", "--help") == ok("--help")


def test_bad_usage_is_status_2_with_a_clear_message():
    fails(2, r"^dmfs: usage: dmfs COMMAND", )
    fails(2, r"unknown command 'frobnicate'", "frobnicate")
    fails(2, r"usage: dmfs put IMAGE HOSTFILE PATH", "put", "x.img")
    fails(2, r"usage: dmfs get IMAGE PATH", "get")
    fails(2, r"usage: dmfs mkfs", "mkfs", "x.img")
    fails(2, r"unknown option -x", "ls", "-x", "x.img")
    fails(2, r"SIZE_MB must be a number", "mkfs", path("never.img"), "lots")
    fails(2, r"--inodes needs a value", "mkfs", path("never.img"), "1", "--inodes")
    assert not os.path.exists(path("never.img"))


def test_missing_image_and_missing_paths():
    missing = path("missing.img")
    fails(2, r"missing\.img: No such file or directory", "ls", missing)
    fails(2, r"missing\.img: No such file or directory", "check", missing)
    image = path("paths.img")
    ok("mkfs", image, "1")
    fails(1, r"paths\.img: /nope: no such file or directory", "get", image, "/nope")
    fails(1, r"/nope/deeper: no such file or directory", "ls", image, "/nope/deeper")
    fails(1, r"/nope/x: no such file or directory", "put", image, host_file("one", b"1"), "/nope/x")
    fails(1, r"/nope/x: no such file or directory", "mkdir", image, "/nope/x")
    fails(1, r"/nope: no such file or directory", "rm", image, "/nope")
    fails(2, r"no-such-host-file: No such file or directory", "put", image, path("no-such-host-file"), "/x")
    fails(1, r"/: is the root directory", "rm", image, "/")
    fails(1, r"is a directory", "get", image, "/")
    fails(1, r"longer than 59 bytes", "mkdir", image, "/" + "n" * 60)
    assert_clean(image)


# ---------------------------------------------------------------- mkfs, ls, get, put


def test_mkfs_makes_an_empty_clean_image():
    image = path("empty.img")
    ok("mkfs", image, "4")
    assert os.path.getsize(image) == 4 * 1024 * 1024
    assert ls(image) == [] and ls(image, "-l") == [] and ls(image, "-R") == []
    img = Image(image)
    assert img.sb["magic"] == FS_MAGIC and img.sb["state"] == STATE_CLEAN and img.sb["root_inode"] == 1
    assert img.sb["block_count"] == 1024 and img.sb["inode_count"] == 256
    root = img.inode(1)
    assert root["type"] == TYPE_DIR and root["nlink"] == 2 and root["size"] == 128
    assert [(e[1], e[2]) for e in img.entries(1)] == [(1, "."), (1, "..")]
    assert img.bit("inode_bitmap_start", 0) == 1, "inode 0 is reserved"
    assert all(img.bit("block_bitmap_start", b) for b in range(img.sb["data_start"] + 1))
    assert not img.bit("block_bitmap_start", img.sb["data_start"] + 1)
    assert_clean(image)
    fails(1, r"exists; give --force", "mkfs", image, "2")
    assert os.path.getsize(image) == 4 * 1024 * 1024
    ok("mkfs", "--force", "--inodes", "40", image, "2")
    assert Image(image).sb["inode_count"] == 64 and os.path.getsize(image) == 2 * 1024 * 1024
    assert_clean(image)
    ok("mkfs", image, "--inodes=100", "2", "--force")
    assert Image(image).sb["inode_count"] == 128, "options anywhere, --inodes=N rounded up to 32s"


SIZES = (0, 1, 4095, 4096, 4097, 48 * 1024 + 1, 4 * 1024 * 1024 + 48 * 1024 + 1, 9 * 1024 * 1024)


def test_put_get_round_trips_through_every_level():
    image = path("sizes.img")
    ok("mkfs", image, "32")
    for i, size in enumerate(SIZES):
        data = content(size, i)
        ok("put", image, host_file("in%d" % size, data), "/f%d" % size)
        ok("get", image, "/f%d" % size, path("out%d" % size))
        assert open(path("out%d" % size), "rb").read() == data, "%d bytes differ" % size
    assert ok("get", image, "/f4097") == content(4097, 4), "get to standard output"
    rows = {r.split()[4]: r.split() for r in ls(image, "-l")}
    for size in SIZES:
        assert rows["f%d" % size][0] == "file" and int(rows["f%d" % size][3]) == size
    img = Image(image)
    first_indirect = img.inode(img.lookup("/f%d" % (48 * 1024 + 1)))
    assert first_indirect["indirect"] and not first_indirect["double_indirect"]
    first_double = img.inode(img.lookup("/f%d" % (4 * 1024 * 1024 + 48 * 1024 + 1)))
    assert first_double["double_indirect"]
    assert img.inode(img.lookup("/f0"))["direct"] == [0] * 12
    assert_clean(image)


def test_put_replaces_a_file_and_frees_its_old_blocks():
    image = path("replace.img")
    big, small = content(9 * 1024 * 1024, 10), content(5000, 11)
    ok("mkfs", image, "16", host_file("big", big) + "=/data")
    used_big = int(re.search(r"(\d+) of \d+ blocks", check(image)[1][0]).group(1))
    ok("put", image, host_file("small", small), "/data")
    assert ok("get", image, "/data") == small
    used_small = int(re.search(r"(\d+) of \d+ blocks", check(image)[1][0]).group(1))
    assert used_big - used_small == (2304 + 1 + 3) - 2, (used_big, used_small)
    ok("put", image, path("big"), "/data")
    assert ok("get", image, "/data") == big
    fails(1, r"/: is the root directory", "put", image, path("small"), "/")
    ok("mkdir", image, "/dir")
    fails(1, r"/dir: is a directory", "put", image, path("small"), "/dir")
    assert_clean(image)


def test_a_replacement_that_fits_only_in_the_old_blocks():
    image = path("tight.img")
    first, second = content(700 * 1024, 12), content(800 * 1024, 13)
    ok("mkfs", image, "1", host_file("first", first) + "=/f")
    ok("put", image, host_file("second", second), "/f")
    assert ok("get", image, "/f") == second
    assert_clean(image)


def test_hundreds_of_files_in_one_directory():
    image = path("many.img")
    names = ["file%03d" % i for i in range(300)]
    specs = [host_file(n, n.encode() * (i % 7)) + "=/many/" + n for i, n in enumerate(names)]
    ok("mkfs", image, "8", *specs)
    assert ls(image, "/many") == names
    img = Image(image)
    many = img.inode(img.lookup("/many"))
    assert many["size"] == 302 * 64 and many["direct"][4] != 0, "five directory blocks"
    for i in (0, 150, 299):
        assert ok("get", image, "/many/" + names[i]) == names[i].encode() * (i % 7)
    for n in names[:100]:
        ok("rm", image, "/many/" + n)
    assert ls(image, "/many") == names[100:]
    ok("put", image, path("file000"), "/many/again")
    assert Image(image).entry(Image(image).lookup("/many"), "again")[0] % BLOCK == 2 * 64, \
        "a new entry takes the first free slot"
    assert_clean(image)


def test_deep_paths():
    image = path("deep.img")
    ok("mkfs", image, "2", host_file("leaf", b"at the bottom\n") + "=/a/b/c/d/e/f/g/h/leaf")
    deep = "/x"
    ok("mkdir", image, deep)
    for i in range(25):
        deep += "/level%02d" % i
        ok("mkdir", image, deep)
    ok("put", image, path("leaf"), deep + "/leaf")
    assert ok("get", image, deep + "/leaf") == b"at the bottom\n"
    assert ok("get", image, "a/b/c/d/e/f/g/h/leaf") == b"at the bottom\n", "a relative path"
    assert ok("get", image, "/a/b/../b/./c/d/e/f/g/h/leaf") == b"at the bottom\n", "'.' and '..'"
    listing = ls(image, "-R")
    assert deep + "/leaf" in listing and "/a/b/c/d/e/f/g/h/leaf" in listing
    assert listing.index("/a") < listing.index("/a/b") < listing.index("/a/b/c")
    rows = {r.split()[4]: r.split() for r in ls(image, "-l", "-R")}
    assert rows["/x"][0] == "dir" and rows["/x"][2] == "3" and rows[deep][2] == "2"
    assert ls(image, "-l", deep + "/leaf")[0].split()[3] == "14", "ls of a file"
    fails(1, r"exists", "mkdir", image, deep)
    fails(1, r"not a directory", "mkdir", image, deep + "/leaf/sub")
    fails(1, r"directory not empty", "rm", image, "/a")
    ok("rm", image, deep + "/leaf")
    ok("rm", image, deep)
    assert_clean(image)


def test_rm_makes_the_space_reusable_and_a_full_image_is_refused_cleanly():
    image = path("full.img")
    ok("mkfs", image, "1")
    half = content(600 * 1024, 20)
    ok("put", image, host_file("half", half), "/one")
    before = open(image, "rb").read()
    fails(1, r"full\.img: image full: /two needs \d+ blocks, \d+ free", "put", image, path("half"), "/two")
    assert open(image, "rb").read() == before, "a refused put leaves the image as it was"
    assert_clean(image)
    ok("rm", image, "/one")
    ok("put", image, path("half"), "/two")
    assert ok("get", image, "/two") == half and ls(image) == ["two"]
    fails(1, r"image full", "put", image, host_file("huge", content(2 * 1024 * 1024, 21)), "/huge")
    assert_clean(image)


def test_running_out_of_inodes_and_a_failed_mkfs_leaves_nothing():
    image = path("inodes.img")
    files = [host_file("i%d" % i, b"x") for i in range(32)]
    fails(1, r"image full: no free inode", "mkfs", "--inodes", "32", image, "1", *files)
    assert not os.path.exists(image)
    assert not [f for f in os.listdir(workdir) if f.startswith("inodes.img")], "temporary left"
    ok("mkfs", "--inodes", "32", image, "1", *files[:30])
    fails(1, r"image full: no free inode", "put", image, files[31], "/last")
    assert len(ls(image)) == 30
    assert_clean(image)


# ---------------------------------------------------------------- check and repair


def damaged(name, damage):
    """A small image holding /a (5 blocks), /b (5 blocks), /d/c and an empty
    /e, with damage(Image) applied; returns (image file, Image before damage)."""
    image = path(name + ".img")
    ok("mkfs", image, "4", host_file("a", content(5 * BLOCK - 100, 30)) + "=/a",
       host_file("b", content(5 * BLOCK, 31)) + "=/b", host_file("c", b"inside d\n") + "=/d/c")
    ok("mkdir", image, "/e")
    assert_clean(image)
    before, img = Image(image), Image(image)
    damage(img)
    img.save()
    return image, before


def repairs(image, pattern, also=()):
    """check reports pattern (and each of also); --repair fixes it; a second
    check is clean. Returns the repair's output lines."""
    before = open(image, "rb").read()
    status, lines = check(image)
    assert status == 1, lines
    assert open(image, "rb").read() == before, "check without --repair changes nothing"
    assert any(re.search(pattern, l) for l in lines), "%r not in %s" % (pattern, lines)
    for p in also:
        assert any(re.search(p, l) for l in lines), "%r not in %s" % (p, lines)
    assert re.search(r": \d+ problems? found", lines[-1]), lines
    status, fixed = check(image, "--repair")
    assert status == 1, fixed
    assert [re.sub(r" \(fixed: .*\)$", "", l) for l in fixed[:-1]] == lines[:-1], \
        "check and --repair report the same: %s / %s" % (lines, fixed)
    assert all("(fixed: " in l for l in fixed[:-1]), fixed
    assert re.search(r"found, (\d+) repaired, 0 not repairable", fixed[-1]), fixed
    assert_clean(image)
    return fixed


def test_check_a_cleared_block_bitmap_bit():
    def damage(img):
        img.set_bit("block_bitmap_start", img.inode(img.lookup("/a"))["direct"][0], 0)
    image, img = damaged("bitmap", damage)
    block = img.inode(img.lookup("/a"))["direct"][0]
    repairs(image, r": block bitmap: block %d marked free but in use$" % block)
    assert Image(image).bit("block_bitmap_start", block) == 1


def test_check_a_cleared_inode_bitmap_bit():
    image, img = damaged("ibitmap", lambda img: img.set_bit("inode_bitmap_start", img.lookup("/b"), 0))
    repairs(image, r": inode bitmap: inode %d marked free but in use$" % img.lookup("/b"))


def test_check_a_block_claimed_by_two_inodes():
    def damage(img):
        a, b = img.inode(img.lookup("/a")), img.inode(img.lookup("/b"))
        img.set_inode(img.lookup("/b"), direct=b["direct"][:1] + [a["direct"][2]] + b["direct"][2:])
    image, img = damaged("twice", damage)
    a, b = img.lookup("/a"), img.lookup("/b")
    shared = img.inode(a)["direct"][2]
    fixed = repairs(image, r": inode %d: block %d also used by inode %d$" % (b, shared, a),
                    also=[r"block bitmap: blocks \d+-\d+ marked in use but free"])
    assert any("file cut to 4096 bytes" in l for l in fixed), fixed
    assert ok("get", image, "/a") == content(5 * BLOCK - 100, 30), "the first owner keeps it"
    assert ok("get", image, "/b") == content(5 * BLOCK, 31)[:BLOCK], "the second is cut there"


def test_check_a_wrong_nlink():
    image, img = damaged("nlink", lambda img: img.set_inode(img.lookup("/a"), nlink=5))
    repairs(image, r": inode %d: nlink 5, should be 1$" % img.lookup("/a"))
    assert Image(image).inode(img.lookup("/a"))["nlink"] == 1


def test_check_an_orphan_file_goes_to_lost_and_found():
    image, img = damaged("orphan", lambda img: img.set_entry_inode(1, "a", 0))
    a = img.lookup("/a")
    fixed = repairs(image, r": inode %d: in use but not reachable from the root$" % a)
    assert any("linked as /lost+found/#%d" % a in l for l in fixed), fixed
    assert ls(image, "/lost+found") == ["#%d" % a]
    assert ok("get", image, "/lost+found/#%d" % a) == content(5 * BLOCK - 100, 30)


def test_check_an_orphan_directory_goes_to_lost_and_found_with_its_files():
    image, img = damaged("orphandir", lambda img: img.set_entry_inode(1, "d", 0))
    d = img.lookup("/d")
    fixed = repairs(image, r": inode %d: in use but not reachable from the root$" % d)
    assert len(fixed) == 2, "moving its '..' is part of the fix, not an nlink problem: %s" % fixed
    assert ok("get", image, "/lost+found/#%d/c" % d) == b"inside d\n"
    after = Image(image)
    assert after.entry(d, "..")[1] == after.lookup("/lost+found")


def test_check_a_bad_dotdot():
    image, img = damaged("dotdot", lambda img: img.set_entry_inode(img.lookup("/d"), "..", img.lookup("/d")))
    d = img.lookup("/d")
    repairs(image, r": directory /d \(inode %d\): '\.\.' names inode %d, should name 1$" % (d, d))
    assert Image(image).entry(d, "..")[1] == 1


def test_check_a_bad_dot():
    image, img = damaged("dot", lambda img: img.set_entry_inode(img.lookup("/e"), ".", 1))
    e = img.lookup("/e")
    repairs(image, r": directory /e \(inode %d\): '\.' names inode 1, should name %d$" % (e, e))


def test_check_a_pointer_out_of_range():
    def damage(img):
        a = img.inode(img.lookup("/a"))
        img.set_inode(img.lookup("/a"), direct=a["direct"][:3] + [img.sb["block_count"] + 7] + a["direct"][4:])
    image, img = damaged("range", damage)
    a = img.lookup("/a")
    repairs(image, r": inode %d: block %d out of range \(file block 3\)$" % (a, img.sb["block_count"] + 7),
            also=[r"block bitmap: block \d+ marked in use but free"])
    data = bytearray(content(5 * BLOCK - 100, 30))
    data[3 * BLOCK:4 * BLOCK] = bytes(BLOCK)
    assert ok("get", image, "/a") == bytes(data), "a hole where the bad pointer was"


def test_check_an_indirect_pointer_out_of_range():
    image = path("indirect.img")
    ok("mkfs", image, "4", host_file("mid", content(100 * BLOCK, 40)) + "=/mid")
    img = Image(image)
    mid = img.lookup("/mid")
    img.set_inode(mid, indirect=3)
    img.save()
    fixed = repairs(image, r": inode %d: block 3 out of range \(indirect block for file blocks 12-1035\)$" % mid)
    assert ok("get", image, "/mid") == content(100 * BLOCK, 40)[:12 * BLOCK] + bytes(88 * BLOCK)
    assert fixed


def test_check_an_indirect_block_that_points_at_itself():
    """Its first pointer names the indirect block itself: the file is cut
    before it, and the indirect block, which then covers nothing kept, is
    released by the same repair, not left past the new size for a second
    repair (an input the checker's fuzzer found)."""
    image = path("selfindirect.img")
    ok("mkfs", image, "4", host_file("mid", content(100 * BLOCK, 41)) + "=/mid")
    img = Image(image)
    mid = img.lookup("/mid")
    table = img.inode(mid)["indirect"]
    struct.pack_into("<I", img.data, table * BLOCK, table)
    img.save()
    fixed = repairs(image, r": inode %d: block %d also used by inode %d$" % (mid, table, mid),
                    also=[r"block bitmap: blocks \d+-\d+ marked in use but free"])
    assert any("file cut to %d bytes" % (12 * BLOCK) in l for l in fixed), fixed
    assert Image(image).inode(mid)["indirect"] == 0
    assert ok("get", image, "/mid") == content(100 * BLOCK, 41)[:12 * BLOCK]


def test_check_a_directory_whose_size_reaches_past_its_last_block():
    """/d's size says 4 GiB, all holes after its first block (found by the
    checker's fuzzer: every walk over such a directory read its 67 million
    entries one by one, and `dmfs check` took 1.6 s). Walks pass over holes
    now, so ls lists it as it is; the check cuts its size to its last block."""
    largest = (12 + 1024 + 1024 * 1024) * BLOCK
    image, img = damaged("holedir", lambda img: img.set_inode(img.lookup("/d"), size=largest))
    d = img.lookup("/d")
    assert ls(image, "/d") == ["c"]
    fixed = repairs(image, r": inode %d: directory size %d reaches past its last block \(it covers 1049612 blocks, "
                           r"the last 1049611 are holes\)$" % (d, largest))
    assert any(l.endswith("(fixed: size cut to %d)" % BLOCK) for l in fixed), fixed
    assert Image(image).inode(d)["size"] == BLOCK
    assert ls(image, "/d") == ["c"] and ok("get", image, "/d/c") == b"inside d\n"


def test_check_a_block_past_the_size():
    image, img = damaged("pastsize", lambda img: img.set_inode(img.lookup("/b"), size=2 * BLOCK))
    b = img.lookup("/b")
    repairs(image, r": inode %d: 3 blocks lie past the size 8192 \(the first: block %d, file block 2\)$"
            % (b, img.inode(b)["direct"][2]), also=[r"block bitmap: blocks \d+-\d+ marked in use but free"])
    assert ok("get", image, "/b") == content(5 * BLOCK, 31)[:2 * BLOCK]


def test_check_a_root_that_is_not_a_directory():
    image, img = damaged("root", lambda img: img.set_inode(1, type=TYPE_FILE))
    repairs(image, r": inode 1: the root is not a directory \(type 1\)$")
    assert ok("get", image, "/d/c") == b"inside d\n", "the tree is kept"


def test_check_folds_the_report_of_a_file_read_as_a_directory():
    image = path("flood.img")
    junk = bytearray(content(64 * 64, 50))
    for i in range(0, len(junk), 64):
        junk[i + 4:i + 64] = b"x" * 60          # 64 entries, none NUL-terminated
    ok("mkfs", image, "2", host_file("junk", bytes(junk)) + "=/d/junk")
    img = Image(image)
    img.set_inode(img.lookup("/d/junk"), type=TYPE_DIR)
    img.save()
    fixed = repairs(image, r": directory /d/junk \(inode \d+\): 52 more bad entries$")
    assert len(fixed) < 20, fixed


def test_check_a_duplicate_name_and_an_entry_naming_a_free_inode():
    def damage(img):
        offset = img.entry(1, "b")[0]
        struct.pack_into("<I60s", img.data, offset, img.lookup("/b"), b"a")
        struct.pack_into("<I60s", img.data, img.entry(img.lookup("/d"), "c")[0], 200, b"ghost")
    image, img = damaged("names", damage)
    b = img.lookup("/b")
    repairs(image, r": directory / \(inode 1\): duplicate name 'a'$",
            also=[r": directory /d \(inode %d\): entry 'ghost' names free inode 200$" % img.lookup("/d"),
                  r": inode %d: in use but not reachable" % b])
    assert ok("get", image, "/lost+found/#%d" % b) == content(5 * BLOCK, 31)


def test_check_a_mounted_state():
    def damage(img):
        struct.pack_into("<I", img.data, 12 * 4, STATE_MOUNTED)
    image, _ = damaged("mounted", damage)
    fails(1, r"marked mounted .*run dmfs check --repair", "put", image, path("a"), "/z")
    assert ok("get", image, "/d/c") == b"inside d\n"
    repairs(image, r": superblock: state is MOUNTED")


def test_check_a_bad_magic_is_reported_and_not_repaired():
    def damage(img):
        struct.pack_into("<I", img.data, 0, 0x12345678)
    image, _ = damaged("magic", damage)
    before = open(image, "rb").read()
    for options in ((), ("--repair",)):
        status, lines = check(image, *options)
        assert status == 1 and re.search(r": not a dmfs image \(magic 0x12345678", lines[0]), lines
        assert re.search(r"1 problem found.*(0 of them repairable|0 repaired, 1 not repairable)", lines[-1]), lines
    assert open(image, "rb").read() == before
    fails(1, r"not a dmfs image", "ls", image)
    fails(1, r"not a dmfs image", "check", host_file("short", b"tiny"))


def test_check_a_bad_layout_is_not_repairable():
    def damage(img):
        struct.pack_into("<I", img.data, 10 * 4, img.sb["data_start"] + 1)
    image, _ = damaged("layout", damage)
    fails(1, r"superblock: data_start is \d+, expected \d+", "check", "--repair", image)


def test_an_output_that_is_an_input_or_not_a_regular_file_is_refused():
    """Issue 18, finding 6: `dmfs get IMG PATH IMG` truncated the image. An
    output that is one of the inputs (the same file, also through a link)
    or that is not a regular file is refused, and nothing is written."""
    data = content(5000, 61)
    image = path("self.img")
    ok("mkfs", "--force", image, "4", host_file("self.data", data) + "=/f")
    before = open(image, "rb").read()
    link = path("self-link.img")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(image, link)
    hard = path("self-hard.img")
    if os.path.lexists(hard):
        os.unlink(hard)
    os.link(image, hard)
    for out in (image, link, hard):
        status, _, err = dmfs("get", image, "/f", out)
        assert status == 1 and err == "dmfs: %s: is the input %s\n" % (out, image), (out, status, err)
    status, _, err = dmfs("put", image, image, "/g")
    assert status == 1 and err == "dmfs: %s: is the input %s\n" % (image, image), (status, err)
    status, _, err = dmfs("mkfs", "--force", image, "4", hard + "=/g")
    assert status == 1 and err == "dmfs: %s: is the input %s\n" % (image, hard), (status, err)
    assert open(image, "rb").read() == before, "the image is untouched"
    for device in ("/dev/null", workdir):
        status, _, err = dmfs("get", image, "/f", device)
        assert status == 1 and err == "dmfs: %s: is not a regular file\n" % device, (device, status, err)
        status, _, err = dmfs("mkfs", "--force", device, "4")
        assert status == 1 and err == "dmfs: %s: is not a regular file\n" % device, (device, status, err)
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    assert ok("get", image, "/f") == data, "standard output is still the default"
