#!/usr/bin/env python3
"""fuzz-seeds.py -- make the fuzzers' seed corpora (tests/fuzz/corpus/TARGET/),
from the project's own tools and formats, so that each fuzzer starts from
inputs that reach deep into what it tests:

    python3 scripts/fuzz-seeds.py

  rules     this build's trace description (from a log tracegen wrote), DPM's
            sample description (thesis Fig. 3.3), the README's rules, and
            descriptions with rules after a `%%` line (tests/fuzz/fuzz_rules.c)
  tracelog  logs tracegen writes (known records, random records), a live
            stream of two logs, a blank trace disk's block 0, and a log of
            DPM's sample layouts written here
  fsimage   small dmfs images (files through the indirect level, nested
            directories), clean and with each kind of damage the checker
            repairs, as patches over the empty image the fuzzer makes
            (tests/fuzz/fuzz_fsimage.c gives the patch format)
  netframe  exchanges of valid DATA, ACK and announcement frames with the
            engine under test (tests/fuzz/fuzz_netframe.c gives the steps)

Files called regression-* (inputs that once found a bug) are kept. The
files are small (the corpora stay well under 1 MB) and always the same
for the same sources but for the dmfs images' time stamps, which the checker
does not read. Run again after a format changes, and commit the result.
"""
import os
import shutil
import struct
import subprocess
import tempfile

from harness import tracelog_seal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
TRACEGEN = os.path.join(ROOT, "build", "tools", "tracegen")
DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
BLOCK = 4096
work = tempfile.mkdtemp(prefix="dm-fuzz-seeds-")


def tmp(name):
    return os.path.join(work, name)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def seed(target, name, data):
    with open(os.path.join(CORPUS, target, name), "wb") as f:
        f.write(data)


def run(*args):
    subprocess.run(list(args), check=True, stdout=subprocess.DEVNULL)


# ---- trace logs (meter/tracelog.h) ----

LOG_HEADER = struct.Struct("<8sIIIIII32s")      # struct tracelog_header
RECORD_BLOCK = struct.Struct("<IIIIIIQ")         # struct tracelog_block
ENTRY = struct.Struct("<HHI")                    # struct tracelog_entry
BLOCK_MAGIC = 0x334B4244                         # "DBK3"
LOG_VERSION = 3

DPM_SAMPLE = (b"header 0.     machine,0,4,16\n"
              b"              traceType,4,4,10\n"
              b"              time,8,4,10\n"
              b"              procTime,12,4,10;\n"
              b"SENDMESSAGE 1.\n"
              b"              fromTask,0,4,16\n"
              b"              toTask,4,4,16\n"
              b"              channel,8,4,10\n"
              b"              code,12,4,10\n"
              b"              sendLink,16,4,10\n"
              b"              passLink,20,4,10;\n")


def description_of(log):
    """The description text a trace log carries."""
    length = LOG_HEADER.unpack_from(log)[4]
    return log[LOG_HEADER.size:LOG_HEADER.size + length]


def sample_log():
    """A log of DPM's sample layouts: two SENDMESSAGE records, one whole
    and one without its last four fields, and 2 records lost."""
    header_blocks = (LOG_HEADER.size + len(DPM_SAMPLE) + BLOCK - 1) // BLOCK
    head = LOG_HEADER.pack(b"DPMTRACE", LOG_VERSION, BLOCK, header_blocks, len(DPM_SAMPLE), 0, 77, b"sample")
    head = (head + DPM_SAMPLE).ljust(header_blocks * BLOCK, b"\0")
    whole = ENTRY.pack(8 + 40, 1, 0x3FF) + struct.pack("<10I", 0, 1, 500, 250, 0x10, 0x20, 5, 9, 2, 3)
    part = ENTRY.pack(8 + 24, 1, 0x3F) + struct.pack("<6I", 0, 1, 900, 450, 0x10, 0x20)
    entries = whole + part
    block = RECORD_BLOCK.pack(BLOCK_MAGIC, 77, 0, len(entries), 2, 0, 2) + entries
    return bytes(tracelog_seal(bytearray(head + block.ljust(BLOCK, b"\0")), header_blocks))


def tracelog_and_rules_seeds():
    run(TRACEGEN, "known", "0x1234", tmp("known.log"))
    run(TRACEGEN, "random", "7", "40", tmp("random.log"))
    run(TRACEGEN, "random", "9", "12", tmp("first.log"))
    run(DMTRACE, "blank", tmp("blank.img"), "1")
    known = read(tmp("known.log"))
    seed("tracelog", "known.log", known)
    seed("tracelog", "random.log", read(tmp("random.log")))
    seed("tracelog", "stream-of-two.bin", read(tmp("first.log")) + known)
    seed("tracelog", "blank-disk-block0.img", read(tmp("blank.img"))[:BLOCK])
    seed("tracelog", "dpm-sample.log", sample_log())

    own = description_of(known)
    seed("rules", "own.desc", own)
    seed("rules", "dpm-sample.desc", DPM_SAMPLE)
    seed("rules", "readme.rules", b"traceType=SEND, channel=#*;\n")
    seed("rules", "receive.rules", b"// every RECEIVE on channel 5 or none, without its pid and pc\n"
                                   b"traceType=RECEIVE, channel<=5, pid=#*, pc=#*;\nstatus<-1;\n")
    seed("rules", "terms.rules", b"time>=0x10, pid!=toTask, size>0;\nsequence<7, machine=*;\n"
                                 b"traceType=DESTROYPROCESS, status>=-9;\n")
    seed("rules", "dpm-sample-split.txt", DPM_SAMPLE + b"\n%%\n"
         b"traceType=SENDMESSAGE, channel=#*, code=#*, sendLink=#*, passLink=#*;\n")
    seed("rules", "own-split.txt", own + b"\n%%\ntraceType=RECEIVE, fromTask=#*;\nload>2;\n")


# ---- file-system images (user/lib/fs_format.h) ----

SUPERBLOCK = struct.Struct("<16I")
INODE = struct.Struct("<HHIQQ12III12I")
DIRENT = struct.Struct("<I60s")
INODE_SIZE = 128


class Image:
    """A dmfs image's bytes, to read and damage. An inode's fields, as
    INODE unpacks them: 0 type, 1 nlink, 3 size, 5-16 direct, 17 indirect."""

    def __init__(self, data):
        self.data = bytearray(data)
        sb = SUPERBLOCK.unpack_from(self.data)
        self.inode_table = sb[8]
        self.block_bitmap = sb[6]

    def inode_at(self, ino):
        return self.inode_table * BLOCK + ino * INODE_SIZE

    def inode(self, ino):
        return list(INODE.unpack_from(self.data, self.inode_at(ino)))

    def set_inode(self, ino, fields):
        INODE.pack_into(self.data, self.inode_at(ino), *fields)

    def entries(self, ino):
        """(offset, inode, name) of every entry of directory ino's first block."""
        fields = self.inode(ino)
        block = fields[5]
        out = []
        for i in range(fields[3] // DIRENT.size):
            at = block * BLOCK + i * DIRENT.size
            number, name = DIRENT.unpack_from(self.data, at)
            out.append((at, number, name.split(b"\0")[0]))
        return out

    def lookup(self, directory, name):
        return next(e for e in self.entries(directory) if e[2] == name)


def patches(image, blank):
    """The bytes where image differs from blank as fuzz_fsimage's patches:
    block, offset, length, bytes; runs a few bytes apart are joined."""
    out = bytearray()
    for b in range(len(image) // BLOCK):
        new, old = image[b * BLOCK:(b + 1) * BLOCK], blank[b * BLOCK:(b + 1) * BLOCK]
        i = 0
        while i < BLOCK:
            if new[i] == old[i]:
                i += 1
                continue
            end = i + 1
            while end < BLOCK and end - i < 255 and (new[end] != old[end] or new[end:end + 8] != old[end:end + 8]):
                end += 1
            out += struct.pack("<BHB", b, i, end - i) + new[i:end]
            i = end
    return bytes(out)


def damaged_variants(clean):
    """(name, image bytes) for the clean image and each kind of damage."""
    def variant(change):
        img = Image(clean)
        change(img)
        return bytes(img.data)

    def state_mounted(img):
        SUPERBLOCK.pack_into(img.data, 0, *(SUPERBLOCK.unpack_from(img.data)[:12] + (2, 0, 0, 0)))

    def bitmap_wrong(img):
        at = img.block_bitmap * BLOCK
        img.data[at] ^= 0x30            # a used block marked free
        img.data[at + 20] |= 0x01       # a free one marked used

    def nlink_wrong(img):
        fields = img.inode(2)
        fields[1] += 3
        img.set_inode(2, fields)

    def unknown_type(img):
        fields = img.inode(3)
        fields[0] = 7
        img.set_inode(3, fields)

    def bad_names(img):
        at, _, _ = img.lookup(1, b"hello.txt")
        img.data[at + 4:at + 64] = b"x" * 60           # no NUL
        at, _, _ = img.lookup(1, b"dir")
        img.data[at + 4:at + 8] = b"a/b\0"

    def pointer_out_of_range(img):
        _, ino, _ = img.lookup(1, b"big")
        fields = img.inode(ino)
        fields[5] = 9999
        img.set_inode(ino, fields)

    def block_claimed_twice(img):
        _, big, _ = img.lookup(1, b"big")
        _, hello, _ = img.lookup(1, b"hello.txt")
        fields = img.inode(hello)
        fields[5] = img.inode(big)[6]
        img.set_inode(hello, fields)

    def orphan_directory(img):
        at, _, _ = img.lookup(1, b"dir")
        img.data[at:at + 4] = b"\0\0\0\0"

    def directory_size_odd(img):
        fields = img.inode(1)
        fields[3] += 10
        img.set_inode(1, fields)

    def root_not_a_directory(img):
        fields = img.inode(1)
        fields[0] = 1
        img.set_inode(1, fields)

    def indirect_past_size(img):
        _, ino, _ = img.lookup(1, b"hello.txt")
        fields = img.inode(ino)
        fields[17] = img.inode(img.lookup(1, b"big")[1])[17]   # big's indirect block, shared
        img.set_inode(ino, fields)

    changes = [state_mounted, bitmap_wrong, nlink_wrong, unknown_type, bad_names, pointer_out_of_range,
               block_claimed_twice, orphan_directory, directory_size_odd, root_not_a_directory,
               indirect_past_size]
    yield "clean", clean
    for change in changes:
        yield change.__name__.replace("_", "-"), variant(change)


def fsimage_seeds():
    blank, full = tmp("blank-fs.img"), tmp("full-fs.img")
    with open(tmp("hello.txt"), "wb") as f:
        f.write(b"hello, world\n")
    with open(tmp("big"), "wb") as f:
        f.write(b"\0" * (20 * BLOCK))       # zeros: its data blocks are no patches, its pointers are
    run(DMFS, "mkfs", "--force", "--inodes", "32", blank, "1")
    run(DMFS, "mkfs", "--force", "--inodes", "32", full, "1", tmp("hello.txt") + "=/hello.txt",
        tmp("big") + "=/big", tmp("hello.txt") + "=/dir/sub/notes")
    run(DMFS, "mkdir", full, "/dir/empty")
    blank_bytes = read(blank)
    for name, data in damaged_variants(read(full)):
        seed("fsimage", name + ".patches", patches(data, blank_bytes))


# ---- network frames (kernel/net/netframe.h) ----

ETHERTYPE = 0x88B5


def frame(kind, machine, epoch, body=b"", node_count=3):
    mac_to = bytes([0x52, 0x54, 0x00, 0x4D, node_count, 1])
    mac_from = bytes([0x52, 0x54, 0x00, 0x4D, node_count, machine])
    payload = struct.pack("<BBIII", 3, kind, machine, node_count, epoch) + body
    return (mac_to + mac_from + struct.pack(">H", ETHERTYPE) + payload).ljust(60, b"\0")


FRAGMENT_MAX = 1434


def data_frame(sequence, length, offset, stamp, flags=0, machine=0, epoch=7, receiver_epoch=9, ack=0, echo=0):
    piece = min(length - offset, FRAGMENT_MAX)
    body = struct.pack("<IIIIIIIHHI", receiver_epoch, sequence, length, offset, stamp, ack, echo, piece, flags, 0)
    return frame(3, machine, epoch, body + bytes((offset + i) % 251 for i in range(piece)))


def ack_frame(ack, echo, whole=0, partial=0, maps=(), machine=0, epoch=7):
    body = struct.pack("<IIIII", 9, ack, echo, whole, partial) + b"".join(struct.pack("<Q", m) for m in maps)
    return frame(4, machine, epoch, body)


def step_frame(f):
    return bytes([0]) + struct.pack("<H", len(f)) + f


def step_send(machine, length):
    return bytes([1, machine]) + struct.pack("<I", length)[:3]


def step_time(microseconds):
    return bytes([2]) + struct.pack("<I", microseconds)


def step_control(queue_full=0, announce=None, epoch=0):
    if announce is None:
        return bytes([3, queue_full])
    return bytes([3, queue_full | 2 | announce << 2]) + struct.pack("<I", epoch)


def netframe_seeds():
    seed("netframe", "announce.steps", step_frame(frame(1, 2, 5, struct.pack("<II", 0, 1))) +
         step_frame(frame(2, 0, 7, struct.pack("<II", 9, 1))))
    seed("netframe", "receive-in-order.steps",
         step_frame(data_frame(1, 10, 0, 100, flags=1)) + step_frame(data_frame(2, 0, 0, 110)))
    seed("netframe", "receive-fragments-out-of-order.steps",
         step_frame(data_frame(3, 3000, 2 * FRAGMENT_MAX, 90, flags=1)) +
         step_frame(data_frame(1, 3000, FRAGMENT_MAX, 95)) +
         step_frame(data_frame(1, 3000, 0, 96)) + step_frame(data_frame(1, 3000, 2 * FRAGMENT_MAX, 97, flags=1)) +
         step_frame(data_frame(2, 5, 0, 98)) + step_frame(data_frame(3, 3000, 0, 99)) +
         step_frame(data_frame(3, 3000, FRAGMENT_MAX, 120)))
    seed("netframe", "send-and-acks.steps",
         step_send(0, 10) + step_send(0, 3000) + step_time(5000) +
         step_frame(ack_frame(1, 5, partial=1, maps=(0b101,))) + step_time(30000) +
         step_frame(ack_frame(2, 40)) + step_send(2, 1) + step_time(25000) + step_send(0, 20) +
         step_frame(data_frame(1, 7, 0, 60, flags=3, ack=3, echo=30000)) + step_time(2000))
    seed("netframe", "timeouts-and-full-queue.steps",
         step_control(queue_full=1) + step_send(0, 4000) + step_time(2000) + step_control() +
         step_time(20000) + step_time(45000) + step_time(700000) + step_time(900000) + step_time(4000000))
    seed("netframe", "reboot-and-stale.steps",
         step_send(0, 100) + step_frame(data_frame(1, 10, 0, 5, epoch=8)) +
         step_control(announce=0, epoch=11) + step_frame(data_frame(1, 10, 0, 7, epoch=11)) +
         step_send(0, 65536) + step_send(7, 1) + step_send(0, 65537))


def main():
    subprocess.run(["make", "-s", "--no-print-directory", "build/tools/dmfs", "build/tools/tracegen",
                    "build/tools/dmtrace"], cwd=ROOT, check=True)
    for target in ("rules", "tracelog", "fsimage", "netframe"):
        directory = os.path.join(CORPUS, target)
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            if not name.startswith("regression-"):      # inputs that found a bug stay
                os.remove(os.path.join(directory, name))
    try:
        tracelog_and_rules_seeds()
        fsimage_seeds()
        netframe_seeds()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(CORPUS) for f in files)
    print("fuzz-seeds: %d bytes in %s" % (total, os.path.relpath(CORPUS, ROOT)))


if __name__ == "__main__":
    main()
