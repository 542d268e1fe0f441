"""The file system's buffer manager over the disk interface, reading images
made on the host by dmfs: file blocks through every indirect level, and
counters that say exactly what happened."""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from harness import Node, ROOT, disk_args, fnv1a, make_image

BLOCK = 4096
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
workdir = tempfile.mkdtemp(prefix="dm-fs-")
node = None
files = {}


def teardown():
    if node:
        node.kill()
    shutil.rmtree(workdir, ignore_errors=True)



def block_of(data, n):
    chunk = data[n * BLOCK:(n + 1) * BLOCK]
    return chunk + bytes(BLOCK - len(chunk))


def booted():
    """An image with a 41-block file (direct and single-indirect blocks) and a
    9 MiB one (double-indirect too); the cache holds 64 blocks."""
    global node
    if node is None:
        image = os.path.join(workdir, "fs.img")
        specs = []
        for name, size in (("small", 167000), ("big", 9 << 20)):
            data = b"".join(hashlib.sha256(b"%s-%d" % (name.encode(), i)).digest() for i in range(size // 32 + 1))[:size]
            path = os.path.join(workdir, name)
            open(path, "wb").write(data)
            files[name] = data
            specs.append("%s=/data/%s" % (path, name))
        make_image(image, 32, *specs)
        listing = subprocess.run([DMFS, "ls", "-l", "-R", image], check=True, stdout=subprocess.PIPE).stdout.decode()
        for line in listing.splitlines():
            f = line.split()
            if f[0] == "file":
                files[os.path.basename(f[4]) + ".inode"] = int(f[1])
        node = Node(extra=disk_args(image))
    return node


def parse_stats(out):
    """The counters of each `stats` in a bmtest run's output, in order."""
    parts = out.split("requests read_block")[1:]
    return [{k: int(v) for k, v in re.findall(r"(\w+) (\d+)", "read_block" + p.split("\nfile block")[0].split("\nsize")[0])}
            for p in parts]


def stats():
    return parse_stats(booted().command("run bmtest stats"))[0]


def read_file(name, count):
    out = booted().command("run bmtest file %d %d" % (files[name + ".inode"], count), timeout=120)
    return {int(n): h for n, h in re.findall(r"file block (\d+) fnv ([0-9a-f]+)", out)}, out


def test_buffer_manager_is_running():
    assert re.search(r"\sbm\s+receiving", booted().command("ps"))


def test_cold_then_warm_read_counts_exactly():
    """Reading a 41-block file twice, in one bmtest run (loading a program
    reads it through the buffer manager too): 41 misses, then 41 hits."""
    ino = files["small.inode"]
    out = booted().command("run bmtest stats file %d 41 stats file %d 41 stats" % (ino, ino), timeout=120)
    before, first, second = parse_stats(out)
    blocks = {int(n): h for n, h in re.findall(r"file block (\d+) fnv ([0-9a-f]+)", out)}
    assert len(blocks) == 41, out
    for n, h in blocks.items():
        assert h == fnv1a(block_of(files["small"], n)), "file block %d differs" % n
    assert first["misses"] - before["misses"] == 41
    assert first["hits"] == before["hits"]
    # Its inode-table block is read once, unless loading the programs before
    # (bmtest, the shell) already cached it: which, depends on where /bin's
    # inodes and /data's fall, so either is right, and every disk read must
    # be one of the misses, that inode-table read or the indirect block.
    inode_reads = first["inode_reads"] - before["inode_reads"]
    assert inode_reads in (0, 1), (before, first)
    assert first["indirect_reads"] - before["indirect_reads"] == 1   # blocks 12..40
    assert first["di_reads"] - before["di_reads"] == 41 + 1 + inode_reads, (before, first)
    assert second["hits"] - first["hits"] == 41
    assert second["misses"] == first["misses"]
    assert second["inode_reads"] == first["inode_reads"]
    assert second["indirect_reads"] == first["indirect_reads"]


def test_double_indirect_blocks_through_a_small_cache():
    data = files["big"]
    total = (len(data) + BLOCK - 1) // BLOCK
    out = booted().command("run bmtest file %d %d" % (files["big.inode"], total), timeout=300)
    blocks = {int(n): h for n, h in re.findall(r"file block (\d+) fnv ([0-9a-f]+)", out)}
    assert len(blocks) == total, out[-500:]
    wrong = [n for n, h in blocks.items() if h != fnv1a(block_of(data, n))]
    assert not wrong, "blocks differ: %s" % wrong[:10]
    assert "size %d" % len(data) in out


def test_every_disk_read_is_accounted_for():
    s = stats()
    assert s["di_reads"] == s["misses"] + s["inode_reads"] + s["indirect_reads"] + s["mount_reads"] + \
        s["bitmap_reads"], s


def test_bad_requests():
    n = booted()
    assert "E_NOTFOUND" in n.command("run bmtest file 0 1")
    assert "E_NOTFOUND" in n.command("run bmtest file 99999 1")
    assert "E_BOUNDS" in n.command("run bmtest block 99999999")
    out = n.command("run bmtest file %d 1" % files["small.inode"])
    assert "file block 0 fnv" in out


def test_write_through_every_level_sync_and_check_on_the_host():
    """Blocks written through the buffer manager into an empty file reach the
    image after BM_SYNC; the host reads them back and finds the image sound."""
    image = os.path.join(workdir, "write.img")
    empty = os.path.join(workdir, "empty")
    open(empty, "wb").close()
    make_image(image, 16, empty + "=/w")
    inode = int(re.search(r"file\s+(\d+)\s+\d+\s+\d+\s+/w\b", subprocess.run(
        [DMFS, "ls", "-l", image, "/w"], check=True, stdout=subprocess.PIPE).stdout.decode()).group(1))
    blocks = 2100                     # direct, single- and double-indirect blocks
    with Node(extra=disk_args(image)) as n:
        out = n.command("run bmtest write %d 0 %d 9 stats" % (inode, blocks), timeout=300)
        assert "wrote %d blocks" % blocks in out, out
        s = parse_stats(out)[0]
        assert n.halt() == 0
    # 2100 data blocks, the single-indirect block, the double-indirect block
    # and the two single-indirect blocks under it.
    assert s["allocations"] == blocks + 4, s
    assert s["di_writes"] == s["writebacks"] + s["sync_writes"], s
    assert s["di_reads"] == s["misses"] + s["inode_reads"] + s["indirect_reads"] + s["mount_reads"] + \
        s["bitmap_reads"], s
    check = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert check.returncode == 0, check.stdout.decode()
    got = subprocess.run([DMFS, "get", image, "/w"], check=True, stdout=subprocess.PIPE).stdout
    want = b"".join(bytes(((i * 7 + b * 13 + 9) ^ (i >> 9)) & 0xff for i in range(BLOCK)) for b in range(blocks))
    assert got == want, "file differs (%d bytes read)" % len(got)


def test_writing_a_missing_inode_fails_cleanly():
    out = booted().command("run bmtest write 99999 0 1 1")
    assert "E_NOTFOUND" in out, out


def test_directory_manager_lookups_and_listings():
    """Names in an image made by dmfs, found by the directory manager through
    the buffer manager: nested paths, a directory of 300 files (five blocks
    of entries), a path 20 directories deep, and the errors."""
    image = os.path.join(workdir, "tree.img")
    hello = os.path.join(workdir, "hello.txt")
    open(hello, "wb").write(b"hello\n")
    deep = "/" + "/".join("d%d" % i for i in range(20)) + "/leaf"
    args = [image, 16, hello + "=/a/b/c.txt", hello + "=" + deep]
    args += ["%s=/many/file%03d" % (hello, i) for i in range(300)]
    make_image(*args)
    with Node(extra=disk_args(image)) as n:
        assert re.search(r"/a/b/c\.txt: inode \d+ file size 6 nlink 1", n.command("run dmtest lookup /a/b/c.txt"))
        assert re.search(r"/a/b: inode \d+ dir size \d+ nlink 2", n.command("run dmtest lookup /a/b"))
        assert re.search(r"/: inode 1 dir", n.command("run dmtest lookup /"))
        assert "file size 6" in n.command("run dmtest lookup " + deep)
        out = n.command("run dmtest ls /many", timeout=60)
        names = [l for l in out.splitlines() if l.startswith("file")]
        assert names == ["file%03d" % i for i in range(300)], names[:5]
        assert "300 entries" in out
        assert n.command("run dmtest ls /").splitlines()[:-1] == ["bin", "a", "d0", "many"]   # directory order
        for bad, error in (("/nope", "E_NOTFOUND"), ("/a/b/c.txt/x", "E_NOTFOUND"), ("relative", "E_INVAL"),
                           ("/" + "x" * 60, "E_INVAL")):
            assert error in n.command("run dmtest lookup " + bad), bad
        assert "E_INVAL" in n.command("run dmtest ls /a/b/c.txt")
        counts = n.command("run dmtest stats")
        assert re.search(r"lookup \d+ list \d+ bm_requests \d+", counts), counts
        n.halt()


def test_create_and_remove_names_then_the_host_finds_the_image_sound():
    image = os.path.join(workdir, "names.img")
    big = os.path.join(workdir, "big41")
    open(big, "wb").write(bytes(range(256)) * (41 * BLOCK // 256))
    hello = os.path.join(workdir, "hello2.txt")
    open(hello, "wb").write(b"hi\n")
    make_image(image, 8, hello + "=/a/b/c.txt", big + "=/a/big")
    free_before = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    with Node(extra=disk_args(image)) as n:
        assert re.search(r"/a/new: inode \d+", n.command("run dmtest create /a/new file"))
        assert "E_STATE" in n.command("run dmtest create /a/new file")
        assert re.search(r"/a/sub: inode \d+", n.command("run dmtest create /a/sub dir"))
        assert re.search(r"/a/sub/f: inode \d+", n.command("run dmtest create /a/sub/f file"))
        assert "E_STATE" in n.command("run dmtest rm /a/sub")           # not empty
        assert "E_NOTFOUND" in n.command("run dmtest create /x/y file")
        assert "E_INVAL" in n.command("run dmtest create /a/.. dir")
        assert "E_INVAL" in n.command("run dmtest rm /")
        for path in ("/a/b/c.txt", "/a/big"):
            assert "removed" in n.command("run dmtest rm " + path)
        assert "E_NOTFOUND" in n.command("run dmtest lookup /a/big")
        assert re.search(r"/a/sub: inode \d+ dir size \d+ nlink 2", n.command("run dmtest lookup /a/sub"))
        assert re.search(r"/a: inode \d+ dir size \d+ nlink 4", n.command("run dmtest lookup /a"))
        for i in range(70):                       # more than a block of entries
            n.command("run dmtest create /a/sub/f%02d file" % i)
        assert "71 entries" in n.command("run dmtest ls /a/sub")
        assert "synced" in n.command("run dmtest sync")
        assert n.halt() == 0
    check = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert check.returncode == 0, check.stdout.decode()
    listing = subprocess.run([DMFS, "ls", "-R", image], check=True, stdout=subprocess.PIPE).stdout.decode().split()
    assert "/a/new" in listing and "/a/sub/f69" in listing and "/a/big" not in listing, listing[:10]
    # the 41 data blocks and the indirect block of /a/big are free again
    used = lambda out: int(re.search(r"(\d+) of \d+ blocks", out).group(1))
    assert used(check.stdout.decode()) < used(free_before.stdout.decode()) - 40, (free_before.stdout, check.stdout)


def test_fsstat_and_sync_commands():
    image = os.path.join(workdir, "stat.img")
    make_image(image, 8)
    with Node(extra=disk_args(image)) as n:
        n.command("run dmtest create /q file")
        assert n.command("sync") == ""
        out = n.command("fsstat")
        reads = int(re.search(r"disk interface:\s+reads (\d+)", out).group(1))
        writes = int(re.search(r"writes (\d+)", out).group(1))
        misses = int(re.search(r"misses (\d+)", out).group(1))
        meta = sum(int(x) for x in re.search(r"inodes (\d+)  indirect blocks (\d+)  bitmap (\d+)  mount (\d+)",
                                               out).groups())
        back = sum(int(x) for x in re.search(r"write-back (\d+)  sync (\d+)", out).groups())
        assert reads == misses + meta and writes == back and writes > 0, out
        assert re.search(r"create 1 unlink 0", out), out
        assert n.halt() == 0
    listing = subprocess.run([DMFS, "ls", image], check=True, stdout=subprocess.PIPE).stdout.decode()
    assert listing.split() == ["bin", "q"], listing
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0


def pattern(n, seed):
    return bytes((((i * 131 + seed) ^ (i >> 11)) & 0xff) for i in range(n))


def test_request_interpreter_files_from_0_bytes_to_9_MiB():
    """Files written and read through the request interpreter in requests that
    do not line up with blocks; the host reads the same bytes back."""
    image = os.path.join(workdir, "ri.img")
    make_image(image, 32)
    cases = [("/zero", 0, 1, 10), ("/one", 1, 2, 10), ("/a4095", 4095, 3, 1000), ("/a4096", 4096, 4, 4096),
             ("/a4097", 4097, 5, 3000), ("/mid", 100000, 6, 7000), ("/big", 9 << 20, 7, 65536)]
    with Node(extra=disk_args(image)) as n:
        for path, size, seed, chunk in cases:
            assert "wrote %d bytes" % size in n.command("run fstest write %s %d %d %d" % (path, size, seed, chunk),
                                                         timeout=300)
            for read_chunk in (4096, 5000):
                out = n.command("run fstest read %s %d" % (path, read_chunk), timeout=300)
                assert "size %d read %d fnv %s" % (size, size, fnv1a(pattern(size, seed))) in out, (path, out)
        assert "removed" in n.command("run fstest rm /mid")
        assert "E_NOTFOUND" in n.command("run fstest read /mid 100")
        assert n.command("sync") == ""
        assert n.halt() == 0
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0
    for path, size, seed, _ in cases:
        if path != "/mid":
            got = subprocess.run([DMFS, "get", image, path], check=True, stdout=subprocess.PIPE).stdout
            assert got == pattern(size, seed), path


def test_shell_file_commands_and_halt_writes_back():
    image = os.path.join(workdir, "cmds.img")
    text = os.path.join(workdir, "t.txt")
    open(text, "wb").write(b"line one\nline two\n")
    make_image(image, 8, text + "=/docs/t.txt")
    with Node(extra=disk_args(image)) as n:
        assert n.command("ls") == "bin\ndocs\n"
        assert re.match(r"file\s+18\s+\d+ t\.txt\n$", n.command("ls -l /docs"))
        assert n.command("cat /docs/t.txt") == "line one\nline two\n"
        assert n.command("mkdir /new /docs/sub") == ""
        assert "exists" in n.command("mkdir /new")
        assert n.command("ls /") == "bin\ndocs\nnew\n"
        assert "directory not empty" in n.command("rm /docs")
        assert n.command("rm /docs/t.txt /new") == ""
        assert re.match(r"dir\s+\d+\s+\d+ sub\n$", n.command("ls -l /docs"))
        out = n.command("cat /nope /docs")
        assert "cat: /nope: not found" in out and "cat: /docs: is a directory" in out
        assert "wrote 5000 bytes" in n.command("run fstest write /docs/sub/w 5000 8 1000")
        assert n.halt() == 0                      # no sync: halt writes back
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0
    got = subprocess.run([DMFS, "get", image, "/docs/sub/w"], check=True, stdout=subprocess.PIPE).stdout
    assert got == pattern(5000, 8)
    listing = subprocess.run([DMFS, "ls", "-R", image], check=True, stdout=subprocess.PIPE).stdout.decode().split()
    listing = [path for path in listing if not path.startswith("/bin")]
    assert listing == ["/docs", "/docs/sub", "/docs/sub/w"], listing


def test_newlib_file_calls(report):
    """fopen/fread/fwrite/fseek/fprintf/fclose and open/read/write/lseek/
    close/stat/fstat/unlink/rename/mkdir, and their errors (user/tests/filetest.c),
    each check reported; then the host finds the image sound."""
    image = make_image(os.path.join(workdir, "newlib.img"), 16)
    with Node(extra=disk_args(image)) as n:
        out = n.command("run filetest /work", timeout=180)
        for line in out.splitlines():
            r = re.match(r"(ok|not ok) (\S+)(?:: (.*))?$", line)
            if r:
                report("filetest." + r.group(2), r.group(1) == "ok", r.group(3) or "")
        m = re.search(r"filetest: (\d+) passed, (\d+) failed", out)
        assert m and int(m.group(1)) >= 50 and m.group(2) == "0", out[-2000:]
        assert n.command("ls /") == "bin\n", "filetest left files behind"
        assert n.halt() == 0
    check = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert check.returncode == 0, check.stdout.decode()


def test_shell_cp_mv_and_redirection():
    image = os.path.join(workdir, "shell.img")
    text = os.path.join(workdir, "t2.txt")
    open(text, "wb").write(b"line one\nline two\n")
    big = os.path.join(workdir, "big200k")
    big_data = pattern(200000, 3)
    open(big, "wb").write(big_data)
    make_image(image, 8, text + "=/docs/t.txt", big + "=/big")
    with Node(extra=disk_args(image)) as n:
        assert n.command("echo hello there > /greeting") == ""
        assert n.command("cat /greeting") == "hello there\n"
        assert n.command("echo more >>/greeting") == ""
        assert n.command("cat /greeting") == "hello there\nmore\n"
        assert n.command("cat /docs/t.txt >/copy") == ""
        assert n.command("cat /copy") == "line one\nline two\n"
        assert n.command("ls /docs > /listing") == ""
        assert n.command("cat /listing") == "t.txt\n"
        assert n.command("echo short > /copy") == ""          # > replaces what was there
        assert n.command("cat /copy") == "short\n"
        assert n.command("ps > /ps.txt") == ""
        assert re.search(r"\sshell\s+calling", n.command("cat /ps.txt"))
        assert "hello: cannot write /nodir/x: No such file or directory" in n.command("hello > /nodir/x")
        assert "> needs a file name" in n.command("echo x >")
        assert "cat: /nope: not found" in n.command("cat /nope > /out")   # errors still reach the console
        assert n.command("cat /out") == ""

        assert n.command("cp /docs/t.txt /docs/t2.txt") == ""
        assert n.command("cat /docs/t2.txt") == "line one\nline two\n"
        assert n.command("cp /big /docs") == ""                  # into a directory, same name
        assert n.command("cp /big /big2") == ""
        assert "cp: /nope: No such file or directory" in n.command("cp /nope /x")
        assert "cp: /docs: is a directory" in n.command("cp /docs /x")
        assert "usage: cp SOURCE DEST" in n.command("cp /big")

        assert n.command("mv /docs/t2.txt /moved.txt") == ""
        assert "cat: /docs/t2.txt: not found" in n.command("cat /docs/t2.txt")
        assert n.command("mv /docs /archive") == ""
        assert n.command("ls /archive") == "t.txt\nbig\n"
        assert n.command("mv /moved.txt /archive") == ""         # into a directory
        assert n.command("cat /archive/moved.txt") == "line one\nline two\n"
        assert n.command("mv /greeting /archive/t.txt") == ""    # replaces a file
        assert n.command("cat /archive/t.txt") == "hello there\nmore\n"
        assert "cannot move into itself" in n.command("mv /archive /archive/inside")
        assert "mv: /nope to /x: No such file or directory" in n.command("mv /nope /x")
        # A program anywhere in the file system runs by its path; its name is the last part.
        assert n.command("mkdir /tools") == "" and n.command("cp /bin/hello /tools/hi") == ""
        assert re.match(r"hello from process \S+ on machine 0\n$", n.command("run /tools/hi"))
        assert re.match(r"hello from process", n.command("/tools/hi"))
        assert "run: /nope: no such program" in n.command("run /nope")
        assert "run: /archive/t.txt: not a program" in n.command("run /archive/t.txt")
        assert n.command("mkdir /full /full/x") == ""
        assert n.command("mv /archive /full") == ""              # a directory into another
        assert n.command("ls /full") == "x\narchive\n"
        assert n.command("cat /full/archive/moved.txt") == "line one\nline two\n"
        assert n.halt() == 0
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0
    for path in ("/big2", "/full/archive/big", "/big"):
        got = subprocess.run([DMFS, "get", image, path], check=True, stdout=subprocess.PIPE).stdout
        assert got == big_data, path


def test_reading_a_file_twice_through_the_request_interpreter_counts_exactly():
    """With a cold cache larger than the file (64 blocks, file of 41), the
    first read misses every block and the second hits every one; each
    FS_READ asks the buffer manager for the block at its offset first, so the
    last (empty) read asks for block 40 once more: one hit. A 300-block file
    read twice through the 64-block cache misses every block both times
    (least recently used goes first), and its indirect block stays cached."""
    image = os.path.join(workdir, "twice.img")
    f41, f300 = os.path.join(workdir, "f41"), os.path.join(workdir, "f300")
    open(f41, "wb").write(pattern(41 * BLOCK - 100, 4))
    open(f300, "wb").write(pattern(300 * BLOCK, 5))
    make_image(image, 16, f41 + "=/data/f41", f300 + "=/data/f300")
    with Node(extra=disk_args(image)) as n:
        assert re.search(r"\sdi\s.*\n(.*\n)*.*\sbm\s.*\n(.*\n)*.*\sdm\s.*\n(.*\n)*.*\sri\s", n.command("ps")), \
            "ps shows the four file-system processes"
        out = n.command("run fstest twice /data/f41")
        assert out.count("read 1: %d bytes fnv %s" % (41 * BLOCK - 100, fnv1a(pattern(41 * BLOCK - 100, 4)))) == 1
        assert "read 1: misses 41 hits 1 holes 0 inode_reads 0 indirect_reads 1 di_reads 42" in out, out
        assert "read 2: misses 0 hits 42 holes 0 inode_reads 0 indirect_reads 0 di_reads 0" in out, out
        out = n.command("run fstest twice /data/f300")
        assert "read 1: misses 300 hits 0 holes 1 inode_reads 0 indirect_reads 1 di_reads 301" in out, out
        assert "read 2: misses 300 hits 0 holes 1 inode_reads 0 indirect_reads 0 di_reads 300" in out, out
        # A file link grants what it was opened for, and reads and writes come over file links only.
        out = n.command("run fstest rights /data/f41 /data")
        assert out == ("write over a read-only file link: E_RIGHTS\n"
                       "read over the fs link: E_BADREQ\n"
                       "truncate over a read-only file link: E_RIGHTS\n"
                       "write access to a directory: E_STATE\n"
                       "read over the read-only file link: E_OK, 16 bytes\n"), out
        # A file link to a removed file does not reach the next file given its inode.
        out = n.command("run fstest stale /data/again")
        assert out == ("same inode: yes\nwrite over the old link: E_NOTFOUND\n"
                       "stat over the old link: E_NOTFOUND\nthe new file: E_OK, size 0\n"), out
        assert n.halt() == 0


def test_several_processes_write_and_read_at_once():
    """Four writers and two readers in the background at once, each with its
    own file; every file is whole afterwards, in the OS and on the host."""
    image = os.path.join(workdir, "busy.img")
    old = os.path.join(workdir, "old")
    open(old, "wb").write(pattern(300000, 40))
    make_image(image, 32, old + "=/old1", old + "=/old2")
    writers = [("/w%d" % i, 150000 + 50000 * i, 20 + i) for i in range(4)]
    with Node(extra=disk_args(image)) as n:
        start = len(n.output)
        # Typed, not n.command(): the processes already running may print
        # in the middle of the shell's echo of the next command line.
        for path, size, seed in writers:
            n.type("run fstest write %s %d %d 3000 &\n" % (path, size, seed))
            n.expect(r"\[0\.\d+\.\d+\] fstest\n", 60)
        for path in ("/old1", "/old2"):
            n.type("run fstest read %s 5000 &\n" % path)
            n.expect(r"\[0\.\d+\.\d+\] fstest\n", 60)
        for path, size, seed in writers:
            n.expect(r"%s: wrote %d bytes" % (re.escape(path), size), 120, since=start)
        want = fnv1a(pattern(300000, 40))
        for path in ("/old1", "/old2"):
            n.expect(r"%s: size 300000 read 300000 fnv %s" % (path, want), 120, since=start)
        for path, size, seed in writers:
            out = n.command("run fstest read %s 4096" % path, timeout=60)
            assert "size %d read %d fnv %s" % (size, size, fnv1a(pattern(size, seed))) in out, out
        assert n.halt() == 0
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0
    for path, size, seed in writers:
        got = subprocess.run([DMFS, "get", image, path], check=True, stdout=subprocess.PIPE).stdout
        assert got == pattern(size, seed), path


def test_a_full_disk_gives_a_clear_error_and_loses_nothing():
    image = os.path.join(workdir, "full.img")
    keep = os.path.join(workdir, "keep")
    open(keep, "wb").write(pattern(50000, 50))
    make_image(image, 8, keep + "=/keep")   # room for /bin's programs and a little more
    with Node(extra=disk_args(image)) as n:
        out = n.command("run fstest write /huge 8000000 51 65536", timeout=120)
        assert "/huge: E_DISKFULL" in out, out
        out = n.command("cp /huge /huge2")
        assert "cp: /huge2: No space left on device" in out, out
        assert "size 50000 read 50000 fnv %s" % fnv1a(pattern(50000, 50)) in n.command("run fstest read /keep 4096")
        assert n.command("rm /huge /huge2") == ""
        assert "wrote 200000 bytes" in n.command("run fstest write /after 200000 52 8192"), "space comes back"
        assert n.halt() == 0
    check = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert check.returncode == 0, check.stdout.decode()
    got = subprocess.run([DMFS, "get", image, "/keep"], check=True, stdout=subprocess.PIPE).stdout
    assert got == pattern(50000, 50)


def test_host_round_trip():
    """A file put into an image on the host, read and changed in the OS,
    then got back on the host."""
    image = make_image(os.path.join(workdir, "trip.img"), 8)
    text = os.path.join(workdir, "trip.txt")
    open(text, "wb").write(b"from the host\n")
    subprocess.run([DMFS, "put", image, text, "/trip.txt"], check=True)
    with Node(extra=disk_args(image)) as n:
        assert n.command("cat /trip.txt") == "from the host\n"
        assert n.command("echo and from the OS >> /trip.txt") == ""
        assert n.command("cp /trip.txt /trip2.txt") == ""
        assert n.halt() == 0
    for path in ("/trip.txt", "/trip2.txt"):
        got = subprocess.run([DMFS, "get", image, path], check=True, stdout=subprocess.PIPE).stdout
        assert got == b"from the host\nand from the OS\n", (path, got)
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0


def test_cp_onto_itself_is_refused_and_keeps_the_file():
    """Issue 18, finding 3: `cp /f /f` (also `cp /d/g /d`, `cp /g /`)
    emptied the file and exited 0. The same file as source and destination
    is refused, with a non-zero status, and its contents kept."""
    image = os.path.join(workdir, "cpself.img")
    text = os.path.join(workdir, "cpself.txt")
    open(text, "wb").write(b"keep me\n")
    make_image(image, 8, text + "=/f", text + "=/d/g", text + "=/g")
    with Node(extra=disk_args(image)) as n:
        for source, dest in (("/f", "/f"), ("/d/g", "/d"), ("/g", "/"), ("/d/g", "/d/../d/g")):
            out = n.command("cp %s %s" % (source, dest))
            assert "cp: %s and %s are the same file" % (source, dest) in out, out
            assert "cp: exit status 1" in out, out
            assert n.command("cat %s" % source) == "keep me\n", source
        assert n.command("cp /f /copy") == "" and n.command("cat /copy") == "keep me\n"
        assert n.halt() == 0
    for path in ("/f", "/d/g", "/g", "/copy"):
        got = subprocess.run([DMFS, "get", image, path], check=True, stdout=subprocess.PIPE).stdout
        assert got == b"keep me\n", path
    assert subprocess.run([DMFS, "check", image], stdout=subprocess.DEVNULL).returncode == 0


def test_a_failed_mkdir_or_create_on_a_full_disk_leaves_no_trace():
    """Issue 18, finding 5: on a full disk mkdir failed but left an
    unreachable directory inode each time (and the parent's link count
    raised); a file whose name needs a new directory block did the same. A
    failed create leaves nothing behind: `dmfs check` is clean after halt."""
    image = os.path.join(workdir, "fullcreate.img")
    empty = os.path.join(workdir, "empty")
    open(empty, "wb").close()
    # /many holds "." and ".." and 62 names: its one block is full.
    make_image(image, 8, *["%s=/many/n%02d" % (empty, i) for i in range(62)])
    with Node(extra=disk_args(image)) as n:
        out = n.command("run fstest write /huge 8000000 53 65536", timeout=120)
        assert "/huge: E_DISKFULL" in out, out
        for name in ("/d1", "/d2", "/d3", "/many/sub"):
            out = n.command("mkdir %s" % name)
            assert out.startswith("mkdir: %s: " % name), out
        out = n.command("echo x > /many/newfile")
        assert "/many/newfile" in out, out
        assert n.halt() == 0
    check = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert check.returncode == 0, check.stdout.decode()
    listing = subprocess.run([DMFS, "ls", image, "/many"], check=True, stdout=subprocess.PIPE).stdout.decode()
    assert sorted(listing.split()) == ["n%02d" % i for i in range(62)], listing
    assert sorted(subprocess.run([DMFS, "ls", image, "/"], check=True, stdout=subprocess.PIPE).stdout.split()) == [
        b"bin", b"huge", b"many"]


def test_a_writer_killed_while_it_writes_leaves_the_file_system_clean():
    """A program killed while its write is on its way: the buffer manager
    finds the writer gone when it moves the block's bytes, after it has
    given the file a new block for them. The block is given back, so that
    no block lies past the file's end: `dmfs check` is clean after halt.
    Ten writers (fsseq, each emptying its file and writing it anew), each
    killed after a different time; the files they leave read whole."""
    image = make_image(os.path.join(workdir, "killed.img"), 16)
    with Node(extra=disk_args(image)) as n:
        for i in range(10):
            out = n.command("run fsseq /w%d 2048 100 &" % i)
            pid = re.search(r"\[(\d+\.\d+\.\d+)\] fsseq", out).group(1)
            time.sleep(0.3 + 0.17 * i)
            n.command("kill %s" % pid)
        for i in range(10):
            assert "not found" not in n.command("ls -l /w%d" % i)
        assert n.halt() == 0
    check = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert check.returncode == 0, check.stdout.decode()
