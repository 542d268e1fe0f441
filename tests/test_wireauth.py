"""The wire's authentication (kernel/net/cluster.c, the seal of
kernel/net/netframe.h): SipHash-2-4 against its published test vectors on
the host; then three nodes sharing a key on a VDE switch in hub mode, and a
host-side sender plugged into the same switch (tools: vde_plug, whose
standard input and output carry raw Ethernet frames, each after its length
as two bytes, big-endian). It sees every frame the nodes send, and sends
frames of its own to them:

  forged    frames it makes itself, with a tag it cannot know;
  altered   frames the nodes sent, with one byte changed, or cut short;
  replayed  frames the nodes sent, sent again unchanged: a DATA frame, an
            ACK, an announcement and an answer to one in the sender's
            current epoch, and an announcement and a DATA frame from a
            former boot of a machine that has rebooted since.

Each must be dropped and counted where the shell's `netstat` shows it
(FORGED, REPLAYED; a DATA frame of a former epoch as STALE, by the
transport), no machine may believe a former epoch again, and the cluster
must go on working. A node without a key refuses to join and says so."""
import os
import re
import secrets
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
from harness import Node, ROOT, disk_args, SYSTEM_DISK

SIPHASH_TEST = os.path.join(ROOT, "build", "tools", "siphash_test")
NODES = 3
KEY = secrets.token_hex(16)
ETHERTYPE = 0x88B5
ANNOUNCE, ANNOUNCE_REPLY, DATA, ACK = 1, 2, 3, 4
SEAL = 16
workdir = tempfile.mkdtemp(prefix="dm-wireauth-")
switch = None
plug = None
nodes = []
epochs = {}          # machine -> the epochs of its boots, in order


def teardown():
    for n in nodes:
        if n is not None:
            n.kill()
    if plug is not None:
        plug.close()
    if switch is not None:
        switch.terminate()
        switch.wait(10)
    shutil.rmtree(workdir, ignore_errors=True)


def mac(machine, count=NODES):
    return bytes([0x52, 0x54, 0x00, 0x4D, count, machine])


class Plug:
    """A host-side sender and listener on the switch, through vde_plug: every
    frame the switch passes to it is kept in `frames` (a reader thread empties
    the pipe), and send() puts a raw frame on the wire."""

    def __init__(self, sock):
        self.proc = subprocess.Popen(["vde_plug", "vde://" + sock], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self.frames = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        stream = self.proc.stdout
        while True:
            head = stream.read(2)
            if len(head) < 2:
                return
            (n,) = struct.unpack(">H", head)
            frame = stream.read(n)
            with self.lock:
                self.frames.append(frame)

    def send(self, frame):
        self.proc.stdin.write(struct.pack(">H", len(frame)) + frame)
        self.proc.stdin.flush()

    def captured(self, kind, machine, to=None, epoch=None):
        """The frames of our EtherType seen so far of type `kind` from `machine`
        (to MAC address `to`, in sender epoch `epoch`, if given), oldest first."""
        with self.lock:
            frames = list(self.frames)
        return [f for f in frames if len(f) >= 30 and f[12:14] == b"\x88\xb5" and f[15] == kind and
                struct.unpack_from("<I", f, 16)[0] == machine and (to is None or f[0:6] == to) and
                (epoch is None or struct.unpack_from("<I", f, 24)[0] == epoch)]

    def close(self):
        self.proc.stdin.close()
        self.proc.terminate()
        self.proc.wait(10)


def boot(k, key=KEY, wait=True):
    """Node k of NODES on the switch with the cluster's key (or `key`, None for
    none), booted until its kernel runs (node 0: until it found its disk)."""
    nic = ["-netdev", "vde,id=n0,sock=%s" % switch_dir(), "-device",
           "virtio-net-device,netdev=n0,mac=%s" % ":".join("%02x" % b for b in mac(k))]
    n = Node(extra=disk_args(SYSTEM_DISK, 0, snapshot=True) + nic, wait_prompt=False,
             bootargs="net.key=%s" % key if key else "")
    m = n.expect(r"machine %d of %d, epoch (\d+)\n" % (k, NODES), 20)
    epochs.setdefault(k, []).append(int(m.group(1)))
    if wait:
        n.expect(r"machine %d: waiting for the process manager on machine 0\n" % k if k else r"disk 0: ", 20)
    return n


def switch_dir():
    return os.path.join(workdir, "switch")


def netstat_row(k, m):
    """Node 0's `netstat` line for machine k's view of machine m, as a dict."""
    out = nodes[0].command("netstat")
    lines = out.splitlines()
    names = lines[0].split()
    for line in lines[1:]:
        fields = line.split()
        if fields[:2] == [str(k), str(m)]:
            return dict(zip(names, fields))
    raise AssertionError("no line %d -> %d in netstat:\n%s" % (k, m, out))


def counted(k, m, column):
    return int(netstat_row(k, m)[column])


def wait_counted(k, m, column, least, timeout=10):
    """Wait until machine k has counted at least `least` in `column` for m."""
    deadline = time.monotonic() + timeout
    while True:
        value = counted(k, m, column)
        if value >= least or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def still_works():
    """Node 0 runs a program on each other machine, and every pair is up."""
    for k in range(1, NODES):
        out = nodes[0].command("run @%d hello" % k)
        assert "hello from process %d." % k in out, out
    out = nodes[0].command("netstat")
    assert len(re.findall(r"^\d+ +\d+ +up ", out, re.M)) == NODES * (NODES - 1), out


def ack_from_1():
    """The latest ACK frame machine 1 sent machine 0. A DATA frame carries
    the acknowledgement whenever one goes back within TRANSPORT_ACK_DELAY_NS
    (kernel/net/transport.h), so ACK frames are few: after a CALL from
    machine 0 to a server on machine 1 (`nettest reach 1`: one call), machine
    1 owes one for the RM_RESULT of its answer and has nothing to carry it,
    so it goes in an ACK frame of its own a millisecond later."""
    if not plug.captured(ACK, 1, to=mac(0)):
        out = nodes[0].command("run nettest reach 1")
        assert "answered" in out, out
    deadline = time.monotonic() + 5
    while not plug.captured(ACK, 1, to=mac(0)):
        assert time.monotonic() < deadline, "machine 1 sent machine 0 no ACK frame"
        time.sleep(0.05)
    return plug.captured(ACK, 1, to=mac(0))[-1]


def test_siphash_vectors_on_the_host():
    subprocess.run(["make", "-s", "--no-print-directory", "build/tools/siphash_test"], cwd=ROOT, check=True)
    run = subprocess.run([SIPHASH_TEST], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.match(r"siphash_test: \d+ checks passed", run.stdout), run.stdout


def test_the_kernel_measures_its_seal():
    """net.authbench=1 (make bench): the instructions to seal and check a
    frame of Ethernet's least and greatest lengths, every check good, the
    longer frame costlier."""
    with Node(bootargs="net.authbench=1") as n:
        figures = dict(re.findall(r"BENCH (frame_auth_\w+) (\d+) instructions \(seal and check of a \d+-byte "
                                  r"frame; 100 of 100 good\)", n.output))
        assert n.halt() == 0
    assert set(figures) == {"frame_auth_min_instr", "frame_auth_instr"}, n.output[:500]
    assert 0 < int(figures["frame_auth_min_instr"]) < int(figures["frame_auth_instr"]) < 100000, figures


def test_a_cluster_boots_with_a_listener_on_the_switch():
    global switch, plug
    switch = subprocess.Popen(["vde_switch", "--hub", "--sock", switch_dir()], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 5
    while not os.path.exists(os.path.join(switch_dir(), "ctl")):
        assert time.monotonic() < deadline, "vde_switch did not start"
        time.sleep(0.05)
    plug = Plug(switch_dir())
    for k in range(NODES):
        nodes.append(boot(k))
    nodes[0].expect(r"\$ ", 40)
    still_works()
    assert plug.captured(DATA, 1, to=mac(0)) and ack_from_1(), "the listener heard nothing"


def test_forged_frames_are_dropped_and_counted():
    """Frames made by the host with a tag it guessed: an announcement naming
    machine 1 in a new epoch (were it believed, machine 1 would pass for
    rebooted), a DATA frame naming machine 1, and one naming no machine of
    the cluster. Machine 0 counts each; the first two for machine 1."""
    before = counted(0, 1, "FORGED")
    header = lambda kind, epoch: (mac(0) + mac(1) + struct.pack(">H", ETHERTYPE) +
                                  struct.pack("<BBIII", 3, kind, 1, NODES, epoch))
    announce = header(ANNOUNCE, 4242) + struct.pack("<II", 0, 7)
    data = (header(DATA, epochs[1][-1]) + struct.pack("<IIIIIIIHHI", epochs[0][-1], 2, 5, 0, 0, 0, 0, 5, 1, 0) +
            b"hello")
    stranger = bytearray(data)
    stranger[6:12] = bytes([0x02, 0, 0, 0, 0, 1])
    for frame in (announce, data, bytes(stranger)):
        plug.send(frame.ljust(44, b"\0") + secrets.token_bytes(SEAL))
    assert wait_counted(0, 1, "FORGED", before + 2) == before + 2
    assert "machine 0: machine 1 is up (epoch 4242)" not in nodes[0].output
    still_works()


def test_altered_frames_are_dropped_and_counted():
    """Frames machine 1 sent to machine 0 (a DATA frame, an ACK), each with
    one byte changed (the sender's epoch, a byte of the message, the frame
    number, the tag), and one cut a byte short: machine 0 counts each."""
    before = counted(0, 1, "FORGED")
    data = plug.captured(DATA, 1, to=mac(0))[-1]
    ack = ack_from_1()
    altered = []
    for frame, at in ((data, 14 + 10), (data, 14 + 50), (ack, len(ack) - SEAL), (ack, len(ack) - 1)):
        changed = bytearray(frame)
        changed[at] ^= 0x01
        altered.append(bytes(changed))
    altered.append(data[:-1])
    for frame in altered:
        plug.send(frame)
    assert wait_counted(0, 1, "FORGED", before + len(altered)) == before + len(altered)
    still_works()


def test_replayed_frames_of_the_current_epoch_are_dropped_and_counted():
    """Frames machine 1 sent in its current boot, sent again unchanged: a
    DATA frame and an ACK to machine 0, its broadcast announcement and its
    answer to machine 0's challenge. The transport's sequence numbers would
    take the DATA frame for a duplicate; the seal's frame number catches
    every one before it: machine 0 counts four replays from machine 1."""
    before = counted(0, 1, "REPLAYED")
    frames = [plug.captured(DATA, 1, to=mac(0))[0], ack_from_1(),
              plug.captured(ANNOUNCE, 1, to=b"\xff" * 6)[0], plug.captured(ANNOUNCE_REPLY, 1, to=mac(0))[0]]
    for frame in frames:
        plug.send(frame)
    assert wait_counted(0, 1, "REPLAYED", before + len(frames)) == before + len(frames)
    still_works()


def test_replayed_frames_of_a_former_epoch_are_dropped_and_counted():
    """Machine 2 reboots; its announcement from the former boot, sent again,
    is answered with a challenge, whose answer shows the current epoch: the
    former one is not believed again and the announcement is counted as
    replayed. A DATA frame of the former boot, sent again, is refused by
    the transport as stale."""
    old_epoch = epochs[2][-1]
    old_announce = plug.captured(ANNOUNCE, 2, to=b"\xff" * 6, epoch=old_epoch)[0]
    old_data = plug.captured(DATA, 2, to=mac(0), epoch=old_epoch)[-1]
    nodes[2].kill()
    nodes[2] = boot(2)
    new_epoch = epochs[2][-1]
    nodes[0].expect(r"machine 0: machine 2 is up \(epoch %d\)\n" % new_epoch, 20, since=0)
    still_works()
    replayed, stale = counted(0, 2, "REPLAYED"), counted(0, 2, "STALE")
    plug.send(old_announce)
    plug.send(old_data)
    assert wait_counted(0, 2, "REPLAYED", replayed + 1) == replayed + 1
    assert wait_counted(0, 2, "STALE", stale + 1) == stale + 1
    seen = re.findall(r"machine 0: machine 2 is up \(epoch (\d+)\)", nodes[0].output)
    assert [int(e) for e in seen] == [old_epoch, new_epoch], nodes[0].output[-1000:]
    still_works()


def test_halt_prints_the_totals():
    """Machine 0's halt line counts every frame dropped for its tag (3
    forged, 5 altered) and every replay (4 of machine 1's, 1 of machine
    2's); the other machines halt cleanly."""
    nodes[0].type("halt\n")
    nodes[0].expect(r"machine 0: halted\n", 30)
    m = re.search(r"net: (\d+) frames sealed; dropped (\d+) with a wrong tag \((\d+) naming no other machine\), "
                  r"(\d+) replayed\n", nodes[0].output)
    assert m, nodes[0].output[-1000:]
    assert (int(m.group(2)), int(m.group(3)), int(m.group(4))) == (8, 1, 5), m.group(0)
    assert "net: from machine 1: 7 with a wrong tag, 4 replayed\n" in nodes[0].output, nodes[0].output[-1000:]
    assert "net: from machine 2: 0 with a wrong tag, 1 replayed\n" in nodes[0].output, nodes[0].output[-1000:]
    for k, n in enumerate(nodes):
        assert n.proc.wait(30) == 0, "node %d: %s" % (k, n.output[-500:])


def test_a_node_without_a_key_does_not_join():
    """A member of a cluster of three booted without net.key says that it
    will not join, and sends nothing."""
    global nodes
    plug.frames.clear()
    n = boot(1, key=None, wait=False)
    nodes.append(n)
    n.expect(r"net: NO CLUSTER KEY \(boot argument net\.key=<32 hex digits>\): machine 1 does not join the "
             r"cluster; it sends no frame and takes none\n", 20)
    n.expect(r"machine 1: waiting for the process manager on machine 0\n", 20)
    time.sleep(1.5)
    assert not plug.captured(ANNOUNCE, 1), "a node without a key announced itself"
