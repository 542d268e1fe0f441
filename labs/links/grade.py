"""The grader of the links lab (docs/labs/links.md), run by scripts/grade.py
(make grade LAB=links) on a cluster of 2 nodes.

Each test runs linkserver and linkclient (user/labs/links/) from node 0's
shell and holds them to what docs/labs/links.md says they print; and checks
what the programs cannot say for themselves: that the pids they name are the
processes `ps` lists, on the machines they were run on; that the bytes'
hashes are those of links_fill's bytes, made again here; that the server
made its copies with MOVEDATA (it is metered into a filter that keeps its
MOVEDATA records alone, and `filter stats` counts them); that it keeps no
link it was passed (its LINKS in `ps`); and that after quit it is gone and
its name with it.
"""
import re
import time

from grade import require, test
from harness import fnv1a

NODES = 2
PID = r"\d+\.\d+\.\d+"
PUT_BYTES, PUT_SEED = 200000, 7          # more than 48 messages could carry; not a whole number of pages
FAR_BYTES, FAR_SEED = 100000, 11         # to and from machine 1
MASK = (1 << 64) - 1


def pattern(n, seed):
    """The n bytes links_fill (user/labs/links/links.h) makes from seed."""
    x = (seed * 0x9e3779b97f4a7c15 + 1) & MASK
    out = bytearray(n)
    for i in range(n):
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
        out[i] = (x >> 32) & 0xff
    return bytes(out)


def server(lab, name, machine=0):
    """The pid of the linkserver serving `name` on `machine`: started from the
    shell (`run [@K] linkserver NAME &`) unless a test before started it."""
    if name in lab.state:
        return lab.state[name]
    where = "@%d " % machine if machine else ""
    out = lab.command("run %slinkserver %s &" % (where, name))
    started = re.search(r"^\[(%s)\] linkserver$" % PID, out, re.M)
    require(started, "run %slinkserver %s & did not start it:\n%s" % (where, name, out))
    pid = started.group(1)
    said = re.search(r"^linkserver: .*$", out, re.M) or lab.expect(r"linkserver: [^\n]*(?=\n)", 10)
    want = "linkserver: serving %s as %s" % (name, pid)
    require(said.group(0) == want, "linkserver printed %r, not %r" % (said.group(0), want))
    require(pid.startswith("%d." % machine), "linkserver runs as %s, not on machine %d" % (pid, machine))
    lab.state[name] = pid
    return pid


def client(lab, args, machine=0):
    """What `run [@K] linkclient ARGS` printed."""
    return lab.command("run %slinkclient %s" % ("@%d " % machine if machine else "", args))


def found(out, regex, what):
    """The match of regex (one whole line) in linkclient's output `out`, or fail."""
    m = re.search("^%s$" % regex, out, re.M)
    require(m, "linkclient %s printed:\n%s" % (what, out.rstrip() or "(nothing)"))
    return m


def ps_row(lab, pid):
    """The process pid as ps lists it (a dict), or None."""
    return next((row for row in lab.ps() if row["pid"] == pid), None)


def hello(lab, name, pid, machine=0):
    """linkclient NAME hello, run on `machine`, finds the server pid and is
    greeted by its own pid, which is a process of `machine`."""
    m = found(client(lab, "%s hello" % name, machine),
              r'linkclient: found %s: process (%s) says "hello, (%s), from %s"' % (name, PID, PID, name),
              "%s hello" % name)
    require(m.group(1) == pid, "linkclient found process %s; the server is %s" % (m.group(1), pid))
    require(m.group(2).startswith("%d." % machine),
            "the server greeted %s, not the client, a process of machine %d" % (m.group(2), machine))


def notes(lab, name, pid, count):
    """linkclient NAME note, `count` times: each note comes from the server
    (the kernel names the sender), numbered on from the last, for a client
    process of machine 0."""
    last = None
    for _ in range(count):
        m = found(client(lab, "%s note" % name), r"linkclient: note from (%s): note (\d+) for (%s)" % (PID, PID),
                  "%s note" % name)
        require(m.group(1) == pid, "the note came from %s, not from the server %s" % (m.group(1), pid))
        require(m.group(3).startswith("0."), "the note is for %s, not for the client on machine 0" % m.group(3))
        require(last is None or int(m.group(2)) == last + 1, "note %s came after note %s" % (m.group(2), last))
        last = int(m.group(2))


def put(lab, name, n, seed, machine=0):
    m = found(client(lab, "%s put %d %d" % (name, n, seed), machine),
              r"linkclient: put %d bytes \(fnv1a ([0-9a-f]{16})\), the server's fnv1a ([0-9a-f]{16})" % n,
              "%s put %d %d" % (name, n, seed))
    want = fnv1a(pattern(n, seed))
    require(m.group(1) == want, "linkclient's bytes hash to %s; links_fill's to %s" % (m.group(1), want))
    require(m.group(2) == want, "the server's bytes hash to %s, not %s as the client's" % (m.group(2), want))


def get(lab, name, n, seed, machine=0):
    m = found(client(lab, "%s get %d" % (name, n), machine),
              r"linkclient: got %d bytes \(fnv1a ([0-9a-f]{16})\)" % n, "%s get %d" % (name, n))
    want = fnv1a(pattern(n, seed))
    require(m.group(1) == want, "the bytes got back hash to %s, not %s as those put" % (m.group(1), want))


def movedata_records(lab, pid):
    """The MOVEDATA records the filter `grade` has received: the shell starts
    it (its log in /grade.log) and meters the server pid into it, MOVEDATA
    alone, with batches sent when 50 ms old, before the first count."""
    if "filter" not in lab.state:
        out = lab.command("filter start grade - - /grade.log")
        require("filter grade: logging to /grade.log" in out, "filter start printed:\n" + out)
        lab.state["filter"] = set()
    if pid not in lab.state["filter"]:
        out = lab.command("meter attach -F grade -e MOVEDATA -a 50 %s" % pid)
        require(out.strip() == "", "meter attach %s printed:\n%s" % (pid, out))
        lab.state["filter"].add(pid)
    out = lab.command("filter stats grade")
    m = re.search(r"^filter grade: \d+ batches, (\d+) records received", out, re.M)
    require(m, "filter stats printed:\n" + out)
    return int(m.group(1))


def moved_with_movedata(lab, pid, before, what):
    """Wait (up to 5 s: a batch leaves when 50 ms old) until the filter has
    more MOVEDATA records of the server than `before`."""
    deadline = time.monotonic() + 5
    while movedata_records(lab, pid) <= before:
        require(time.monotonic() < deadline, "the server made no MOVEDATA for %s (it was metered)" % what)
        time.sleep(0.2)


@test(10, "links: the client finds the server")
def server_found(lab):
    pid = server(lab, "lab-a")
    hello(lab, "lab-a", pid)
    row = ps_row(lab, pid)
    require(row and row["name"] == "linkserver" and row["node"] == 0,
            "ps lists no linkserver %s on machine 0: %s" % (pid, row))


@test(10, "links: a passed link carries a note back")
def note_back(lab):
    notes(lab, "lab-a", server(lab, "lab-a"), 2)


@test(10, "links: put moves the bytes to the server (MOVEDATA)")
def put_movedata(lab):
    pid = server(lab, "lab-a")
    before = movedata_records(lab, pid)
    put(lab, "lab-a", PUT_BYTES, PUT_SEED)
    lab.state["put"] = True
    moved_with_movedata(lab, pid, before, "put")


@test(10, "links: get moves them back (MOVEDATA)")
def get_movedata(lab):
    pid = server(lab, "lab-a")
    if "put" not in lab.state:                 # a boot since the put test: the server is new
        put(lab, "lab-a", PUT_BYTES, PUT_SEED)
        lab.state["put"] = True
    before = movedata_records(lab, pid)
    get(lab, "lab-a", PUT_BYTES, PUT_SEED)
    get(lab, "lab-a", 1000, PUT_SEED)          # the first 1000 of them
    moved_with_movedata(lab, pid, before, "get")


@test(5, "links: the server keeps no link it was passed")
def no_link_kept(lab):
    pid = server(lab, "lab-a")
    before = ps_row(lab, pid)
    notes(lab, "lab-a", pid, 3)
    put(lab, "lab-a", 5000, 1)
    get(lab, "lab-a", 5000, 1)
    after = ps_row(lab, pid)
    require(before and after and after["links"] == before["links"],
            "the server held %s links before 3 notes, a put and a get, and %s after"
            % (before and before["links"], after and after["links"]))


@test(10, "links: client and server on different machines")
def across_machines(lab):
    pid = server(lab, "lab-b", machine=1)
    row = ps_row(lab, pid)
    require(row and row["name"] == "linkserver" and row["node"] == 1,
            "ps lists no linkserver %s on machine 1: %s" % (pid, row))
    hello(lab, "lab-b", pid)
    notes(lab, "lab-b", pid, 1)
    put(lab, "lab-b", FAR_BYTES, FAR_SEED)
    get(lab, "lab-b", FAR_BYTES, FAR_SEED)
    hello(lab, "lab-a", server(lab, "lab-a"), machine=1)   # and a client on machine 1 to machine 0
    put(lab, "lab-a", FAR_BYTES, FAR_SEED + 1, machine=1)
    get(lab, "lab-a", FAR_BYTES, FAR_SEED + 1, machine=1)


@test(5, "links: quit ends the server and frees its name")
def quit_ends(lab):
    pid = server(lab, "lab-b", machine=1)
    found(client(lab, "lab-b quit"), r"linkclient: lab-b has quit", "lab-b quit")
    del lab.state["lab-b"]
    deadline = time.monotonic() + 5
    while ps_row(lab, pid):
        require(time.monotonic() < deadline, "linkserver %s still runs 5 s after quit" % pid)
        time.sleep(0.2)
    found(client(lab, "lab-b hello"), r"linkclient: no server lab-b \(not found\)", "lab-b hello after quit")
