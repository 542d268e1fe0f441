"""The grader of the readahead lab (docs/labs/readahead.md), run by
scripts/grade.py (make grade LAB=readahead).

It boots twice, each time node 0 on a copy of the system disk whose disk
answers every request in DISK_SERVICE_US of machine time (disk.service_us),
so that a disk wait is the same on any host and read-ahead has a disk to
hide:

- The timed boot (the first test), unmetered: `readfile make` writes
  /big, and `readfile seq` and `readfile random` read it, first with the
  buffer manager's read-ahead off (`readfile ahead 0`), then with one block
  (`readfile ahead 1`); then fsseq and fsrand write and read with it on;
  `sync` and `halt`. The readers check every block against the pattern
  they know and say how long they waited for the file system, in machine
  time (guest ns: instructions, and the modelled disk's waits). After the
  halt, `dmfs check` and `dmfs get /big` read the disk copy.
- The traced boot (the last test): the file system metered from boot into
  the filter fstrace on a trace disk (meter.fs=0), the readers metered into
  it too; its log, read with `dpm dump`, shows what the buffer manager sent
  the disk interface and when. The metering makes the timing no measure
  (a process waits while its batches go to the filter), so the times come
  from the first boot alone.

The thresholds come from ten runs each of this grader on the starting point
(no read-ahead) and on the reference solution (docs/labs/solutions/
readahead.patch, one block ahead), on a 2-core host with a load of 4 to 9
from other work. The sequential reader's wait with read-ahead on over its
wait with it off: 0.985 to 1.045 at the starting point, 0.508 to 0.614 with
the solution; SEQUENTIAL_GAIN lies between. The random reader's: 0.914 to
1.034 at the starting point, 0.998 to 1.075 with the solution; RANDOM_COST
leaves room above, and a read-ahead that reads ahead of every request,
random or not, measured 1.53.
"""
import os
import re
import shutil
import struct
import subprocess
import time

from grade import dpm, require, test
from harness import DMFS, DMTRACE, SYSTEM_DISK

NODES = 1
DISK_SERVICE_US = 50          # machine time of one disk request (docs/cluster.md, DISK_SERVICE_US)
BIG_KIB, BIG_BLOCKS = 1024, 256   # /big: four times the buffer manager's 64-block cache
RANDOM_READS = 128
RUNS = 2                      # each reader's runs with read-ahead off, then on: the least wait of them counts
TRACED_KIB, TRACED_BLOCKS = 512, 128
SEED = 1
SEQUENTIAL_GAIN = 0.80        # read-ahead on: the sequential reader waits at most this much of its wait with it off
RANDOM_COST = 1.20            # read-ahead on: the random reader waits at most this much of its wait with it off
REPLY_CHANNEL = 4294967294    # DM_REPLY_CHANNEL (kernel/demos.h)
found = {}                    # what the timed boot found, for the tests after it


def pattern(blocks, seed):
    """The bytes of a file `readfile make` made (user/labs/readahead/readfile.c,
    pattern_word): its 64-bit words, little-endian."""
    mask = (1 << 64) - 1
    words = []
    for i in range(blocks * 512):
        z = (((i + 1) * 0x9e3779b97f4a7c15) & mask) ^ seed
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & mask
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & mask
        words.append(z ^ (z >> 31))
    return struct.pack("<%dQ" % len(words), *words)


def disk_copy(lab, name):
    """A copy of the system disk in the lab's scratch directory."""
    path = os.path.join(lab.scratch, name)
    shutil.copyfile(SYSTEM_DISK, path)
    return path


def command(lab, line, want, timeout=60):
    """What `line` printed, which must hold a whole line matching `want`; its match."""
    out = lab.command(line, timeout)
    m = re.search("^%s$" % want, out, re.M)
    require(m, "%s printed:\n%s" % (line, out.rstrip() or "(nothing)"))
    return m


def read_line(kind, path):
    """The line readfile seq or random prints on success, as a regex."""
    hashed = r" fnv1a=([0-9a-f]{16})" if kind == "seq" else ""
    return r"readfile %s %s: ok blocks=(\d+)%s ns=(\d+) waited=(\d+)" % (kind, path, hashed)


def reader(lab, kind, args, hash_made=None, metered=False):
    """Run readfile KIND ARGS: (blocks, ns, waited), the whole file's hash
    checked against the one made."""
    line = "%srun readfile %s %s" % ("meter -F fstrace " if metered else "", kind, args)
    m = command(lab, line, read_line(kind, args.split()[0]))
    if kind == "seq":
        require(m.group(2) == hash_made, "%s read a file of hash %s; readfile make wrote %s" % (line, m.group(2), hash_made))
        return int(m.group(1)), int(m.group(3)), int(m.group(4))
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def readahead(lab, blocks):
    command(lab, "run readfile ahead %d" % blocks,
            r"readfile: the buffer manager reads %d blocks? ahead \(it read \d+\)" % blocks)


@test(15, "readahead: a file reads back whole, with read-ahead and without", time_limit=120, boot=False)
def reads_right(lab):
    found.clear()
    disk = disk_copy(lab, "timed.img")
    lab.boot(disk=disk, disk_service_us=DISK_SERVICE_US)
    made = command(lab, "run readfile make /big %d %d" % (BIG_KIB, SEED),
                   r"readfile make /big: ok blocks=%d fnv1a=([0-9a-f]{16})" % BIG_BLOCKS).group(1)
    for blocks in (0, 1):
        readahead(lab, blocks)
        for run in range(RUNS):
            seq = reader(lab, "seq", "/big %d" % SEED, made)
            rand = reader(lab, "random", "/big %d %d" % (RANDOM_READS, SEED))
            found["seq", blocks] = min(found.get(("seq", blocks), seq), seq, key=lambda r: r[2])
            found["random", blocks] = min(found.get(("random", blocks), rand), rand, key=lambda r: r[2])
    command(lab, "run fsseq /seq 256 2", r"fsseq /seq: ok size=262144 rounds=2 .*")
    command(lab, "run fsrand /rand 256 300 3 30", r"fsrand /rand: ok size=262144 ops=300 .*")
    reader(lab, "seq", "/big %d" % SEED, made)
    require(lab.command("sync") == "", "sync failed")
    found["halt"] = lab.halt()
    found["disk"] = disk


@test(10, "readahead: the disk is sound after halt, and holds the file", boot=False)
def sound_after_halt(lab):
    require("disk" in found, "the first test did not get as far as halt")
    said = found["halt"]
    require("machine 0: halted" in said and "pm: halt:" not in said, "halt printed:\n" + said[-1500:])
    check = subprocess.run([DMFS, "check", found["disk"]], capture_output=True, text=True)
    require(check.returncode == 0 and ": clean:" in check.stdout, "dmfs check found:\n" + check.stdout + check.stderr)
    got = subprocess.run([DMFS, "get", found["disk"], "/big"], capture_output=True)
    require(got.returncode == 0, "dmfs get /big: " + got.stderr.decode(errors="replace"))
    want = pattern(BIG_BLOCKS, SEED)
    if got.stdout != want:
        at = next((i for i in range(min(len(got.stdout), len(want))) if got.stdout[i] != want[i]), None)
        require(False, "/big on the disk: %d bytes, differing from the pattern first at byte %s"
                % (len(got.stdout), at if at is not None else min(len(got.stdout), len(want))))


@test(20, "readahead: a sequential reader waits less with read-ahead on", boot=False)
def sequential_waits_less(lab):
    require(("seq", 1) in found, "the first test did not get as far as both sequential reads")
    (_, _, off), (_, _, on) = found["seq", 0], found["seq", 1]
    per_block = off / BIG_BLOCKS
    require(per_block >= DISK_SERVICE_US * 1000,
            "with read-ahead off the reader waited %.1f us a block, less than the disk's %d us: off is not off"
            % (per_block / 1000, DISK_SERVICE_US))
    require(on <= SEQUENTIAL_GAIN * off,
            "readfile seq /big waited %.1f ms with read-ahead on, %.1f ms with it off (%.2f of it; at most %.2f wanted)"
            % (on / 1e6, off / 1e6, on / off, SEQUENTIAL_GAIN))


@test(10, "readahead: a random reader waits no longer with read-ahead on", boot=False)
def random_waits_no_longer(lab):
    require(("random", 1) in found, "the first test did not get as far as both random reads")
    (_, _, off), (_, _, on) = found["random", 0], found["random", 1]
    require(on <= RANDOM_COST * off,
            "readfile random /big waited %.1f ms with read-ahead on, %.1f ms with it off (%.2f of it; at most %.2f allowed)"
            % (on / 1e6, off / 1e6, on / off, RANDOM_COST))


def records(log):
    """The records of the log, as `dpm dump` prints them: a dict each, with
    its type under "type" and every number as an int."""
    rows = []
    for line in dpm("dump", log).splitlines():
        fields = line.split()
        if not fields or "=" not in line:
            continue
        row = {"type": fields[0]}
        for field in fields[1:]:
            name, _, value = field.partition("=")
            row[name] = int(value, 0)
        rows.append(row)
    return rows


def named(rows, name):
    """The pids of the processes called `name`, in the order they were made."""
    text = int.from_bytes(name.encode(), "little")
    made = [r for r in rows if r["type"] == "CREATEPROCESS" and r["nameLow"] == text]
    return [r["pid"] for r in sorted(made, key=lambda r: r["time"])]


def buffer_manager_in(rows, bm, di, ri, window):
    """What the buffer manager did while a reader ran (`window`: the first
    and last times of the reader's records), read from its own records in
    their order: `requests`, the request interpreter's requests it served;
    `waited`, those during which it asked the disk interface for a block by
    CALL (passing a link: a DI_READ it waited for); `sent`, its DI_READs sent
    with SEND; and `went_on`, those of them whose request (the one being
    served when it was sent) was answered before the disk interface's answer
    to it came: it asked and went on. The disk interface answers in order, so
    its k-th answer over a passed link is to the k-th DI_READ sent."""
    mine = sorted((r for r in rows if r["pid"] == bm), key=lambda r: r["sequence"])
    figures = {"requests": 0, "waited": 0, "sent": 0, "went_on": 0}
    received = 0              # requests received so far; a request's number is their count before it
    answered = set()          # the numbers of the requests answered
    serving = None            # the request being served: [number, requester, whether it waited]
    reads = []                # the DI_READs sent with SEND: (in the window, the request being served, or None)
    answers = 0               # the disk interface's answers to them received so far
    for r in mine:
        inside = window[0] <= r["time"] <= window[1]
        if r["type"] == "RECEIVE" and r["fromTask"] != di and r["replySlot"] >= 0:
            serving = [received, r["fromTask"], False]
            received += 1
            figures["requests"] += inside and r["fromTask"] == ri
        elif r["type"] == "SEND" and r["toTask"] == di and r["status"] == 0:
            if not r["call"]:
                reads.append((inside, serving[0] if serving else None))
                figures["sent"] += inside
            elif r["passLink"] >= 0 and serving:
                serving[2] = True
        elif r["type"] == "SEND" and serving and r["toTask"] == serving[1] and r["channel"] == REPLY_CHANNEL:
            figures["waited"] += inside and serving[2] and serving[1] == ri
            answered.add(serving[0])
            serving = None
        elif r["type"] == "RECEIVE" and r["fromTask"] == di and r["channel"] != REPLY_CHANNEL:
            if answers < len(reads):
                in_window, request = reads[answers]
                figures["went_on"] += in_window and (request is None or request in answered)
            answers += 1
    figures["went_on"] += sum(in_window for in_window, _ in reads[answers:])   # never waited for
    return figures


def filter_caught_up(lab):
    """Wait until the filter fstrace has taken every batch queued for it:
    it answers `filter stats` after them. A full queue (DM_QUEUE_MAX batches)
    refuses the question: it is asked again. At halt the process manager
    asks the filter to write out what it has, and a full queue would refuse
    that too."""
    deadline = time.monotonic() + 10
    while True:
        out = lab.command("filter stats fstrace")
        if re.search(r"^filter fstrace: \d+ batches, \d+ records received", out, re.M):
            return
        require(time.monotonic() < deadline, "filter stats fstrace printed:\n" + out)
        time.sleep(0.2)


def window_of(rows, pid):
    times = [r["time"] for r in rows if r["pid"] == pid]
    return min(times), max(times)


@test(20, "readahead: the trace shows the disk asked ahead of a reader in order, not of one at random",
      time_limit=120, boot=False)
def asked_ahead(lab):
    lab.boot(disk=disk_copy(lab, "traced.img"), trace_disks=os.path.join(lab.scratch, "trace"), meter_fs=0,
             disk_service_us=DISK_SERVICE_US)
    made = command(lab, "run readfile make /small %d %d" % (TRACED_KIB, SEED),
                   r"readfile make /small: ok blocks=%d fnv1a=([0-9a-f]{16})" % TRACED_BLOCKS).group(1)
    readahead(lab, 0)
    reader(lab, "seq", "/small %d" % SEED, made, metered=True)
    readahead(lab, 1)
    reader(lab, "seq", "/small %d" % SEED, made, metered=True)
    reader(lab, "random", "/small %d %d" % (TRACED_BLOCKS // 2, SEED), metered=True)
    filter_caught_up(lab)
    said = lab.halt()
    made = re.search(r"^machine 0: meter: (\d+) records", said, re.M)
    require(made, "halt printed:\n" + said[-1500:])
    log = os.path.join(lab.scratch, "fs.log")
    out = subprocess.run([DMTRACE, "extract", os.path.join(lab.scratch, "trace", "trace0.img"), log],
                         capture_output=True, text=True)
    require(out.returncode == 0, "dmtrace extract: " + out.stderr)
    rows = records(log)
    require(len(rows) == int(made.group(1)), "the log holds %d records; the kernel made %s" % (len(rows), made.group(1)))
    (di,), (bm,), (ri,) = named(rows, "di"), named(rows, "bm"), named(rows, "ri")
    readers = named(rows, "readfile")
    require(len(readers) == 3, "the trace holds %d metered readers, not 3" % len(readers))
    runs = [buffer_manager_in(rows, bm, di, ri, window_of(rows, pid)) for pid in readers]
    for run, what in zip(runs, ("in order, read-ahead off", "in order, read-ahead on", "at random, read-ahead on")):
        require(run["requests"] >= TRACED_BLOCKS // 2,
                "the reader %s: the buffer manager served %d of its requests in the trace" % (what, run["requests"]))
    off, on, random = runs
    require(off["sent"] == 0, "with read-ahead off, the buffer manager sent %d DI_READs without waiting"
            % off["sent"])
    require(on["waited"] <= on["requests"] // 10,
            "with read-ahead on, %d of the %d requests of a reader in order waited for a DI_READ by CALL (at most "
            "a tenth may)" % (on["waited"], on["requests"]))
    require(on["sent"] >= on["requests"] * 8 // 10,
            "with read-ahead on, the buffer manager sent %d DI_READs without waiting for %d requests in order (at "
            "least 8 in 10 wanted)" % (on["sent"], on["requests"]))
    require(on["went_on"] >= on["sent"] * 9 // 10,
            "of its %d DI_READs sent ahead, the buffer manager answered the request that sent it before the disk "
            "interface's answer came for only %d: it waited for them" % (on["sent"], on["went_on"]))
    require(random["sent"] <= random["requests"] // 10,
            "with read-ahead on, the buffer manager sent %d DI_READs ahead for %d requests at random places (at "
            "most 1 in 10 allowed)" % (random["sent"], random["requests"]))
