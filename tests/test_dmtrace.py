"""dmtrace (tools/dmtrace.c), the host tool for trace disks and trace logs,
on logs of known records written by tests/tracegen.c with meter/'s own
writer: `dump` prints exactly the records, fields and loss count the log
holds, in each field's display base, and selects with DPM rules; `extract`
takes from a trace disk image only the newest log, not the older, longer
log left behind it; `blank` makes a sparse trace disk that says it has no
log yet; files that are not trace disks, damaged logs and bad rules are
refused with the file named; --help documents it all."""
import os
import shutil
import subprocess
import tempfile

from harness import ROOT, SYSTEM_DISK, tracelog_seal

# The sanitized build (address and undefined behaviour), which stops at the
# first memory error; leaks at exit are not reported (a one-shot tool).
DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace-sanitized")
SANITIZER_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
TRACEGEN = os.path.join(ROOT, "build", "tools", "tracegen")
BLOCK = 4096
workdir = tempfile.mkdtemp(prefix="dm-dmtrace-")

subprocess.run(["make", "-s", "--no-print-directory", "build/tools/dmtrace-sanitized", "build/tools/tracegen"],
               cwd=ROOT, check=True)

# What `dmtrace dump` prints of tracegen's known log (tests/tracegen.c, known()).
KNOWN_DUMP = """\
RECEIVE machine=2 traceType=3 time=1000 procTime=500 pc=0x800013e8 load=3 length=96 pid=0x200000500300001 \
sequence=0 fromTask=0x200000500200001 messageId=0x2a code=7 channel=5 size=64 linkSlot=-1 replySlot=3
RECEIVE machine=2 traceType=3 procTime=1000 pc=0x800017d0 load=3 length=96 pid=0x200000500300001 \
sequence=1 fromTask=0x200000500200001 messageId=0x2b code=8 size=100 linkSlot=4 replySlot=-1
MOVEDATA traceType=7 sequence=5 size=4096 fromLink=-2
DESTROYPROCESS machine=2 traceType=11 time=4000 procTime=2000 pc=0x80001fa0 load=3 length=64 \
pid=0x200000500300001 sequence=6 status=-9
4 records, 3 lost
"""


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)


def path(name):
    return os.path.join(workdir, name)


def run(*args):
    """Runs a host tool; (exit status, stdout, stderr)."""
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=60, env=SANITIZER_ENV)
    return p.returncode, p.stdout, p.stderr


def dmtrace(*args):
    return run(DMTRACE, *args)


def tracegen(*args):
    status, out, err = run(TRACEGEN, *args)
    assert status == 0, err


def write(name, text):
    with open(path(name), "w") as f:
        f.write(text)
    return path(name)


def test_help_and_usage():
    status, out, err = dmtrace("--help")
    assert status == 0 and err == "", (status, err)
    for text in ("SYNOPSIS", "dmtrace blank [--force] IMAGE [SIZE_MB]", "dmtrace extract IMAGE OUT",
                 "dmtrace unstream STREAM OUT", "dmtrace dump LOG [RULES]", "EXIT STATUS", "a trace disk with no log yet", "EXAMPLES"):
        assert text in out, text
    assert dmtrace("dump", "--help")[1] == out
    for args in ((), ("frob",), ("dump",), ("extract", "a"), ("unstream", "a"), ("blank",), ("blank", path("x.img"), "0"),
                 ("blank", path("x.img"), "12k")):
        status, out, err = dmtrace(*args)
        assert status == 2 and err.startswith("dmtrace: usage: ") and "dmtrace --help" in err, (args, status, err)
    assert not os.path.exists(path("x.img"))


def test_dump_prints_exactly_the_known_records():
    tracegen("known", "0x1234", path("known.log"))
    status, out, err = dmtrace("dump", path("known.log"))
    assert status == 0 and err == "", err
    assert out == KNOWN_DUMP, out


def test_dump_selects_with_rules():
    """The first matching rule decides which fields stay; a field the log
    did not keep reads as 0 (the second RECEIVE's channel)."""
    tracegen("known", "0x1234", path("known.log"))
    rules = write("receive.rules", "// every RECEIVE on channel 5 or none, without its pid and pc\n"
                                   "traceType=RECEIVE, channel<=5, pid=#*, pc=#*;\n"
                                   "status<-1;\n")
    status, out, err = dmtrace("dump", path("known.log"), rules)
    assert status == 0, err
    lines = out.splitlines()
    assert len(lines) == 4, out
    assert lines[0] == ("RECEIVE machine=2 traceType=3 time=1000 procTime=500 load=3 length=96 sequence=0 "
                        "fromTask=0x200000500200001 messageId=0x2a code=7 channel=5 size=64 linkSlot=-1 replySlot=3")
    assert lines[1].startswith("RECEIVE machine=2 traceType=3 procTime=1000 load=3 ") and "channel" not in lines[1]
    assert lines[2].startswith("DESTROYPROCESS ") and lines[2].endswith(" status=-9")
    assert lines[3] == "3 records, 3 lost"


def test_dump_refuses_bad_rules_and_damaged_logs():
    tracegen("known", "0x1234", path("known.log"))
    rules = write("bad.rules", "traceType=SEND;\nchannel=5, colour=3;\n")
    status, out, err = dmtrace("dump", path("known.log"), rules)
    assert status == 1 and out == "", out
    assert err == "dmtrace: %s:2:12: no such field in the description\n" % rules, err
    with open(path("known.log"), "rb") as f:
        data = bytearray(f.read())
    entry = BLOCK + 32                       # the first entry, after the record block's header
    data[entry:entry + 2] = (4000).to_bytes(2, "little")
    tracelog_seal(data, 1)                   # the entry checks find it, not the block's checksum
    with open(path("damaged.log"), "wb") as f:
        f.write(data)
    status, out, err = dmtrace("dump", path("damaged.log"))
    assert status == 1 and err == "dmtrace: %s: block 1: a damaged entry\n" % path("damaged.log"), (status, err)


def test_blank_makes_a_sparse_trace_disk_with_no_log_yet():
    image = path("blank.img")
    assert dmtrace("blank", image, "2") == (0, "", "")
    assert os.path.getsize(image) == 2 << 20
    with open(image, "rb") as f:
        assert f.read(8) == b"DPMTRACE"
    for args in (("extract", image, path("out.log")), ("dump", image)):
        status, out, err = dmtrace(*args)
        assert (status, out, err) == (1, "", "dmtrace: %s: a trace disk with no log yet\n" % image), (status, err)
    assert not os.path.exists(path("out.log")) and not os.path.exists(path("out.log.partial"))
    status, _, err = dmtrace("blank", image)
    assert status == 1 and err == "dmtrace: %s: exists (--force replaces it)\n" % image, err
    assert dmtrace("blank", "--force", image)[0] == 0
    st = os.stat(image)
    assert st.st_size == 64 << 20 and st.st_blocks * 512 < 1 << 20, "64 MiB by default, sparse: %r" % (st,)


def test_extract_takes_only_the_newest_log_off_a_disk():
    """An older, longer log is left on the disk after the newest one; its
    blocks continue the numbering but belong to another log identity."""
    image = path("disk.img")
    assert dmtrace("blank", "--force", image, "4")[0] == 0
    tracegen("random", "7", "3000", image)
    tracegen("known", "8", image)
    tracegen("known", "8", path("fresh.log"))
    status, out, err = dmtrace("extract", image, path("out.log"))
    assert status == 0 and err == "", err
    assert out == "%s: 2 blocks, 4 records, 3 lost -> %s\n" % (image, path("out.log")), out
    with open(path("out.log"), "rb") as got, open(path("fresh.log"), "rb") as want:
        assert got.read() == want.read()
    assert dmtrace("dump", path("out.log"))[1] == KNOWN_DUMP
    assert dmtrace("dump", image)[1] == KNOWN_DUMP
    # The older log, whole, before the newer was written over it.
    tracegen("random", "7", "3000", path("old.img"))
    status, out, _ = dmtrace("extract", path("old.img"), path("old.log"))
    blocks = int(out.split(": ")[1].split()[0])
    assert status == 0 and blocks > 40 and " 3000 records, 0 lost" in out, out


def test_unstream_takes_the_last_log_of_a_stream():
    """A live stream holds logs one after another, each a header then its
    record blocks; the last is rebuilt. (meter_test checks repeated blocks and
    cut streams; the trace suite a real filter's stream.)"""
    tracegen("random", "7", "300", path("first.log"))
    tracegen("known", "8", path("second.log"))
    with open(path("stream.bin"), "wb") as s:
        for name in ("first.log", "second.log"):
            with open(path(name), "rb") as f:
                s.write(f.read())
    status, out, err = dmtrace("unstream", path("stream.bin"), path("rebuilt.log"))
    assert status == 0 and err == "", err
    assert out == "%s: 2 blocks, 4 records, 3 lost (of 2 logs in the stream) -> %s\n" % (
        path("stream.bin"), path("rebuilt.log")), out
    assert dmtrace("dump", path("rebuilt.log"))[1] == KNOWN_DUMP
    for bad, why in ((write("text.bin", "x" * 9000), "no trace log in the stream (9000 bytes)"),
                     (write("empty.bin", ""), "empty: not a trace disk or log")):
        status, out, err = dmtrace("unstream", bad, path("never.log"))
        assert (status, err) == (1, "dmtrace: %s: %s\n" % (bad, why)), (status, err)
    assert not os.path.exists(path("never.log"))


def test_not_a_trace_disk():
    zeros = path("zeros.img")
    with open(zeros, "wb") as f:
        f.truncate(1 << 20)
    for image in (zeros, SYSTEM_DISK):
        status, out, err = dmtrace("extract", image, path("never.log"))
        assert (status, err) == (1, "dmtrace: %s: not a trace disk (no DPMTRACE header)\n" % image), (status, err)
    status, _, err = dmtrace("dump", path("missing.log"))
    assert (status, err) == (1, "dmtrace: %s: No such file or directory\n" % path("missing.log")), err
    short = write("short.log", "DPMTRACE")
    status, _, err = dmtrace("dump", short)
    assert status == 1 and err == "dmtrace: %s: too short to be a trace disk or log (8 bytes)\n" % short, err
    assert not os.path.exists(path("never.log"))


def test_an_output_that_is_an_input_or_not_a_regular_file_is_refused():
    """Issue 18, finding 6: `dmtrace extract T.img T.img` replaced the trace
    disk. An output that is the input (also through a link) or not a
    regular file is refused, and nothing is written."""
    image = path("self.img")
    assert dmtrace("blank", "--force", image, "2")[0] == 0
    tracegen("known", "8", image)
    before = open(image, "rb").read()
    link = path("self-link.img")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(image, link)
    for command in ("extract", "unstream"):
        for out in (image, link):
            status, _, err = dmtrace(command, image, out)
            assert (status, err) == (1, "dmtrace: %s: is the input %s\n" % (out, image)), (command, out, err)
        status, _, err = dmtrace(command, image, "/dev/null")
        assert (status, err) == (1, "dmtrace: /dev/null: is not a regular file\n"), (command, err)
    status, _, err = dmtrace("blank", "--force", "/dev/null")
    assert (status, err) == (1, "dmtrace: /dev/null: is not a regular file\n"), err
    assert open(image, "rb").read() == before, "the trace disk is untouched"
    assert not os.path.isfile("/dev/null") and not os.path.exists(image + ".partial")


def test_a_log_cut_short_is_said_so():
    """Issue 18, finding 10: a log cut at 10,000 or 4,097 bytes was read to
    its last whole block without a word. Each reader says the log is cut
    short, as dpm does; where not one record could be read, the exit
    status is 1 and no OUT is written."""
    tracegen("random", "7", "300", path("whole.log"))
    data = open(path("whole.log"), "rb").read()
    for size, blocks in ((10000, 2), (4097, 1)):
        cut = write("cut%d.log" % size, "")
        with open(cut, "wb") as f:
            f.write(data[:size])
        said = "dmtrace: %s: the log is cut short: block %d has only %d of its %d bytes\n" % (
            cut, blocks, size - blocks * BLOCK, BLOCK)
        status, out, err = dmtrace("dump", cut)
        records = int(out.splitlines()[-1].split()[0]) if out else 0
        assert err == said, (size, err)
        assert status == (0 if records else 1), (size, status, out[-200:])
        for command in ("extract", "unstream"):
            status, out, err = dmtrace(command, cut, path("cut.out"))
            assert said in err, (command, size, err)
            assert status == (0 if records else 1), (command, size, status)
            assert os.path.exists(path("cut.out")) == (records > 0), (command, size)
            if os.path.exists(path("cut.out")):
                os.unlink(path("cut.out"))


def test_a_flipped_byte_in_a_record_block_is_detected():
    """Issue 18, finding 10: a byte flipped inside a record was read as data.
    Each record block carries a checksum of its contents: damage is
    reported, naming the file and the block, and the block is not read."""
    tracegen("random", "7", "300", path("flip.log"))
    data = bytearray(open(path("flip.log"), "rb").read())
    at = BLOCK + 32 + 8 + 24           # the first record's pc, in block 1
    data[at] ^= 0x10
    bad = path("flipped.log")
    with open(bad, "wb") as f:
        f.write(data)
    status, out, err = dmtrace("dump", bad)
    assert status == 1 and out == "", out[:300]
    assert err == "dmtrace: %s: block 1: damaged: its checksum does not match its contents\n" % bad, err
    status, _, err = dmtrace("extract", bad, path("flipped.out"))
    assert status == 1 and "block 1: damaged" in err and not os.path.exists(path("flipped.out")), err
