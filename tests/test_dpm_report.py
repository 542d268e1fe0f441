"""dpm report and dpm live (analysis/commands/cmd_report.c, analysis/report/,
commands/cmd_live.c, load/live_follow.c, models/live_view.c),
under the sanitizers' build, on logs `dpm generate` writes from scenarios
whose figures are worked out by hand (tests/test_dpm.py's KNOWN scenario,
DPM's Fig. 2 shape ABCBA):

- report: the page parses (Python's html.parser, every element closed in
  order), holds each section, the scenario's numbers in its tables, the
  SVG pictures (the communication graph's edges and nodes, the heat map's
  cells, a rate line per machine, the critical path's timeline, the state
  diagram, the space-time diagram's arrows, none backward), the same
  figures as `dpm parallelism`, `critpath`, `causality`, `clocks` and
  `waitstates` print, escapes a program name full of markup, and refuses a
  damaged log naming the file and record without leaving a page behind;
- live: a stream file made as a filter makes one (the header, then each
  record block again and again as it fills) is followed: --once gives the
  scenario's figures exactly; --step replays it frame by frame, each frame
  counting only the new entries of a repeated block, with rates, queue
  lengths, phase changes and the history line; a second log in the stream
  starts everything over; a stream growing while dpm live runs is
  followed like tail -f; a damaged stream is refused naming the file and
  record; usage errors."""
import csv
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser

from harness import ROOT, tracelog_seal

sys.path.insert(0, os.path.join(ROOT, "tests"))
import test_dpm  # noqa: E402  (its KNOWN scenario, worked out by hand there)
import test_dpm_graph  # noqa: E402  (DPM's Fig. 2 shapes)

DPM = os.path.join(ROOT, "build", "tools", "dpm-sanitized")
BLOCK = 4096
workdir = tempfile.mkdtemp(prefix="dm-dpm-report-")


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)
    test_dpm.teardown()
    test_dpm_graph.teardown()


def path(name):
    return os.path.join(workdir, name)


def dpm(*args, timeout=120):
    """Runs the analyzer (sanitized build); (exit status, stdout, stderr)."""
    p = subprocess.run([DPM, *args], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
    assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def generate(name, scenario):
    with open(path(name + ".scenario"), "w") as f:
        f.write(scenario)
    status, _, err = dpm("generate", path(name + ".scenario"), path(name + ".log"))
    assert status == 0, err
    return path(name + ".log")


# ---- the page ----

VOID = {"meta", "br", "img", "hr", "input", "link"}


class Page(HTMLParser):
    """The page's elements checked for nesting, and its tables and SVG
    elements collected: tables[id] = rows of cell texts; svg[tag] = the
    attributes of each such element inside an <svg>; titles: every SVG
    <title>'s text."""

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.sections = [], [], []
        self.tables, self.svg, self.titles, self.text = {}, {}, [], []
        self.table = self.row = self.cell = None
        self.in_svg = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "section":
            self.sections.append(attrs.get("id"))
        if tag == "table":
            self.table = self.tables.setdefault(attrs.get("id") or "table%d" % len(self.tables), [])
        if tag == "tr" and self.table is not None:
            self.row = []
            self.table.append(self.row)
        if tag in ("td", "th") and self.row is not None:
            self.cell = []
        if tag == "svg":
            self.in_svg += 1
        if self.in_svg:
            self.svg.setdefault(tag, []).append(attrs)

    def handle_startendtag(self, tag, attrs):
        if self.in_svg:
            self.svg.setdefault(tag, []).append(dict(attrs))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append((tag, self.getpos(), self.stack[-3:]))
            return
        self.stack.pop()
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        if tag == "table":
            self.table = self.row = None
        if tag == "svg":
            self.in_svg -= 1

    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if self.stack and self.stack[-1] == "title" and self.in_svg:
            self.titles.append(data)


def report(*args):
    """`dpm report ARGS -o page.html`: the parsed page."""
    out = path("page.html")
    status, printed, err = dpm("report", *args, "-o", out)
    assert status == 0 and err == "", err
    page = Page()
    with open(out, encoding="utf-8") as f:
        page.feed(f.read())
    page.close()
    assert page.errors == [] and page.stack == [], (page.errors, page.stack)
    return page, printed


def rows(page, table):
    """A table's data rows as {first cell: other cells}."""
    return {r[0]: r[1:] for r in page.tables[table] if r and r[0]}


def test_report_of_the_known_scenario():
    log = generate("known", test_dpm.KNOWN)
    page, printed = report(log)
    assert printed == "%s: 26 records, 2 lost, 2 missing in sequence gaps\n" % path("page.html"), printed
    assert page.sections == ["summary", "graph", "processes", "matrix", "traffic", "sizes", "queues", "waits",
                             "blocking", "cpu", "shares", "machines", "rate", "parallelism", "critpath", "clocks",
                             "spacetime", "waitstates"], page.sections
    summary = {r[0]: r[1] for r in page.tables["summary-table"]}
    assert summary == {"records": "26", "lost": "2", "missing in sequence gaps": "2", "processes": "4",
                       "traced processes": "3", "messages": "7", "bytes": "752", "sends that failed at once": "1"}
    processes = {r[1]: r[2:] for r in page.tables["processes-table"][1:]}
    assert processes["client 0.17.1"] == ["0", "9", "5", "680", "1", "32", "3750", "1600000.0", "2"], processes
    assert processes["kernel 0.0.1"] == ["0", "0", "0", "0", "2", "56", "-", "-", "-"], processes
    assert page.tables["matrix-messages"][1:] == [["[2]", "1", "-", "4"], ["[3]", "-", "1", "-"],
                                                  ["[4]", "1", "-", "-"]], page.tables["matrix-messages"]
    assert page.tables["matrix-bytes"][1][1:] == ["16", "-", "664"], page.tables["matrix-bytes"]
    text = "".join(page.text)
    assert page.tables["traffic-table"][1:] == [["local", "6", "85.7", "712", "94.7"],
                                                ["remote", "1", "14.3", "40", "5.3"]], page.tables["traffic-table"]
    assert [page.tables[name + "-summary"][1] for name in ("sizes", "waits", "blocking")] == [
        ["7", "16", "107.4", "300"], ["3", "600", "1000.0", "1500"], ["2", "250", "375.0", "500"]]
    assert page.tables["waits-histogram"][1:] == [["512..1023", "2", "66.7", ""], ["1024..2047", "1", "33.3", ""]]
    assert page.tables["queues-table"][1:] == [["[3]", "server 0.18.1", "3", "0.800", "1.500"]]
    assert "4450 instructions in all." in text
    assert page.tables["cpu-table"][3] == ["[4]", "1.19.1", "700", "15.7", "its stream starts mid-run at PROCTIME 5000"]
    shares = page.tables["shares-table"]
    assert shares[1][:4] == ["client 0.17.1", "44.9", "71.4", "90.4"], shares
    assert shares[2][4:] == ["kernel 0.0.1", "1", "16"] and shares[3][4:] == ["server 0.18.1", "4", "664"], shares
    # The pictures: four edges and four nodes (the kernel untraced), a heat-map cell per pair,
    # a rate line per machine, the timeline and its two processes.
    assert "client 0.17.1 -> server 0.18.1: 4 messages, 664 bytes" in page.titles, page.titles
    edges = [g for g in page.svg["g"] if g.get("class") == "edge"]
    nodes = [g for g in page.svg["g"] if g.get("class", "").startswith("node")]
    assert len(edges) == 4 and len(nodes) == 4 and sum(g["class"] == "node untraced" for g in nodes) == 1
    assert sum(t.endswith("bytes") and " -> " in t for t in page.titles) == 8      # edges and heat-map cells
    lines = {p["data-machine"]: p["points"].split() for p in page.svg["polyline"]}
    assert sorted(lines) == ["0", "1"] and all(len(points) == 60 for points in lines.values()), lines
    assert "the critical path on a timeline" in page.titles


def test_report_agrees_with_the_graph_commands():
    log = generate("abcba", test_dpm_graph.FIGURE_2_ABCBA)
    page, _ = report("--server", "a,b,c", log)
    assert page.sections[-6:] == ["parallelism", "critpath", "clocks", "spacetime", "waitstates", "causality"], \
        page.sections
    _, out, _ = dpm("parallelism", "--csv", log)
    want = [[name, t, t_max, "%.3f" % float(p), "%.1f" % (100.0 * int(outside) / int(t_max) if int(t_max) else 0),
             "%.3f" % float(plain)]
            for name, t, t_max, p, outside, _, plain in csv.reader(out.splitlines()[1:])]
    assert page.tables["steps"][1:] == want, (page.tables["steps"], want)
    _, out, _ = dpm("critpath", log)
    t_max = re.search(r"t_max = (\d+) ns", out).group(1)
    assert "t_max = %s ns" % t_max in "".join(page.text), t_max
    assert page.tables["strings"][1:] == [["1", "ABCBA"]], page.tables["strings"]
    assert [r[1] for r in page.tables["paths"][1:]] == ["AB", "ABC", "ABCB", "ABCBA", "BA", "BC", "BCB", "BCBA",
                                                         "CB", "CBA"], page.tables["paths"]
    transitions = page.tables["transitions"]
    assert ["B b 0.18.1", "A", "0 (0.0%)", "0 (0.0%)", "1 (100.0%)"] in transitions, transitions
    assert "the causality state diagram" in page.titles
    states = [g for g in page.svg["g"] if g.get("class") == "state"]
    labels = "".join(page.text)
    assert len(states) == 4 and "after A: 100.0% (1)" in labels and "1 requests" in labels


def test_report_clocks_spacetime_and_waits():
    """The skewed call of test_dpm_graph: the offsets as dpm clocks gives
    them; the space-time diagram, a line per process and an arrow per
    message, none running backward though the reply did by the clocks as
    recorded; the waits as dpm waitstates splits them. Then random traffic
    over three skewed machines: 200 arrows drawn, none backward."""
    log = generate("skewed", test_dpm_graph.SKEWED_CALL)
    page, _ = report(log)
    assert page.sections[-3:] == ["clocks", "spacetime", "waitstates"], page.sections
    assert page.tables["offsets"][1:] == [["0 (reference)", "0", "0", "0", "0", "1", "1"],
                                          ["1", "+1000000", "+999900", "+1000100", "100", "1", "1"]]
    backward = {r[0]: r[1] for r in page.tables["backward"]}
    assert backward == {"messages": "2", "between machines, timed": "2", "backward by the machines' own clocks": "1",
                        "backward within one machine": "0", "backward once corrected": "0"}, backward
    processes = [l for l in page.svg["line"] if l.get("class") == "process"]
    arrows = [l for l in page.svg["line"] if l.get("class", "").startswith("message")]
    assert len(processes) == 2 and len(arrows) == 2, page.svg["line"]
    assert all(float(a["x2"]) >= float(a["x1"]) for a in arrows), arrows
    assert [a["class"] for a in arrows] == ["message remote", "message remote"], arrows
    assert "client 0.16.1 -> server 1.17.1: 10 bytes, sent at 500, received at 600 (corrected ns), 100 ns" in \
        page.titles, page.titles
    assert page.tables["wait-categories"][1:] == [["late sender", "500", "27.8"], ["delivery", "300", "16.7"],
                                                  ["queued", "0", "0.0"], ["server's work", "1000", "55.6"],
                                                  ["outside the trace", "0", "0.0"]], page.tables["wait-categories"]
    assert page.tables["wait-causes"][1] == ["client 0.16.1", "server's work", "server 1.17.1", "1000", "55.6", "1"]
    assert page.tables["wait-processes"][1:] == [["client 0.16.1", "1200", "66.7"], ["server 1.17.1", "600", "33.3"]]
    random_log = path("skewed-random.log")
    status, _, err = dpm("generate", "--random", "5000", "--seed", "2", "--skew", "1=900000,2=30000", random_log)
    assert status == 0, err
    page, _ = report(random_log)
    arrows = [l for l in page.svg["line"] if l.get("class", "").startswith("message")]
    assert len(arrows) == 200 and all(float(a["x2"]) >= float(a["x1"]) for a in arrows), len(arrows)
    backward = {r[0]: int(r[1]) for r in page.tables["backward"]}
    assert backward["backward by the machines' own clocks"] > 0 and backward["backward once corrected"] == 0


def test_report_of_a_process_that_moves():
    """test_dpm's MOVED (worked out by hand there): the machines' table and
    the moves, the pong's machines in the processes' table and in the
    placement, and the space-time diagram with a row for the pong on each
    machine it was on, a line for each of its three stays, an arrow for
    each of its two moves and each message between the rows it was on."""
    log = generate("moved", test_dpm.MOVED)
    page, _ = report(log)
    assert "machines" in page.sections and page.sections[-3:] == ["clocks", "spacetime", "waitstates"], page.sections
    assert page.tables["machines-table"][1:] == [["0", "2", "10", "2300", "2", "1", "1", "1"],
                                                 ["1", "1", "9", "600", "0", "1", "1", "1"]], page.tables["machines-table"]
    assert page.tables["migrations-table"][1:] == [["pong 1.17.1", "1", "1", "0", "3600", "2000", "4096", "0"],
                                                   ["pong 1.17.1", "2", "0", "1", "1005900", "1000", "8192", "1"]]
    processes = {r[1]: r[2] for r in page.tables["processes-table"][1:]}
    assert processes == {"ping 0.16.1": "0", "pong 1.17.1": "1>0>1"}, processes
    assert rows(page, "placement")["pong 1.17.1"] == ["1>0>1", "1>0>1"], page.tables["placement"]
    lines = [l for l in page.svg["line"] if l.get("class") == "process"]
    moves = [l for l in page.svg["line"] if l.get("class") == "move"]
    arrows = [l for l in page.svg["line"] if l.get("class", "").startswith("message")]
    rows_of = lambda ls, end: sorted({float(l[end]) for l in ls})
    assert len(lines) == 4 and len(moves) == 2 and len(arrows) == 4, page.svg["line"]
    assert len(rows_of(lines, "y1")) == 3       # ping's; pong's on machine 0 and on machine 1
    pong_rows = {float(m["y1"]) for m in moves} | {float(m["y2"]) for m in moves}
    assert len(pong_rows) == 2 and all(float(m["x2"]) >= float(m["x1"]) for m in moves + arrows), moves
    assert "pong 1.17.1 moved from machine 1 to machine 0 (move 1): out of execution 2.0 us" in page.titles, \
        page.titles


def test_report_says_what_is_outside_and_honours_the_window():
    """test_dpm_graph's OUTSIDE_PREFIX (worked out by hand there): the page
    gives both graphs' P, the time outside the trace and for whom, the
    warning, P for each shipped network, and honours --window-of."""
    log = generate("prefix", test_dpm_graph.OUTSIDE_PREFIX)
    zero = path("zero.delays")
    with open(zero, "w") as f:
        f.write("0 0 0\n")
    page, _ = report("--delays", zero, log)
    assert page.tables["steps"][0] == ["step", "T (ns)", "t_max (ns)", "P", "outside %", "P plain"], page.tables
    assert page.tables["steps"][1] == ["1 upper bound: no delivery time, no contention", "17500", "1011500", "0.017",
                                       "98.9", "1.522"], page.tables["steps"]
    assert page.tables["outside"][1] == ["1 upper bound: no delivery time, no contention", "1000000", "98.9", "1",
                                         "0.18.1 98.9%"], page.tables["outside"]
    text = "".join(page.text)
    assert "98.9% of t_max (step 1) is time spent waiting for requests outside the trace" in text, text
    assert "--window-of 0.19.1" in text and "in requests to 0.18.1" in text
    networks = page.tables["networks"]
    assert networks[0] == ["network", "step 2", "step 3 (Appendix A)", "step 3 (elapsed)", "P plain, step 3",
                           "what it is"], networks
    assert [r[0] for r in networks[1:]] == ["gbe", "here", "infiniband", "vax"], networks
    page, printed = report("--window-of", "0.19.1", log)
    summary = {r[0]: r[1] for r in page.tables["summary-table"]}
    assert summary["window"] == test_dpm_graph.WINDOW_OF_U, summary
    assert summary["records"] == "7" and printed.startswith("%s: 7 records" % path("page.html")), (summary, printed)
    assert "Warning:" not in "".join(page.text)


def test_report_escapes_and_refuses():
    log = generate("markup", "process A machine 0 name <i>&\"x'\nprocess B machine 0\nA send B 10\nB receive\n")
    page, _ = report(log)
    with open(path("page.html")) as f:
        raw = f.read()
    assert "<i>" not in raw and "&lt;i&gt;&amp;&quot;x&#39; 0.16.1" in raw
    assert "<i>&\"x' 0.16.1 -> 0.17.1: 1 messages, 10 bytes" in page.titles, page.titles
    # A damaged log: the file and record named, no page left behind.
    data = bytearray(open(generate("known", test_dpm.KNOWN), "rb").read())
    h = struct.unpack_from("<I", data, 16)[0]
    struct.pack_into("<H", data, h * BLOCK + 32, 3)                # record 0's length made absurd
    tracelog_seal(data, h)                                         # found by the entry checks
    open(path("bad.log"), "wb").write(data)
    status, out, err = dpm("report", "-o", path("bad.html"), path("bad.log"))
    assert status == 1 and err == "dpm report: %s: record 0: a damaged entry in block %d\n" % (path("bad.log"), h)
    assert not os.path.exists(path("bad.html")) and not os.path.exists(path("bad.html.partial"))
    for args, said in ((("report", log), "-o OUT.html names the page"), (("report", "-o", path("x.html")),
                       "no trace log named"), (("report", "--frob", "-o", "x", log), "unknown option --frob"),
                       (("report", "--server", "nobody", "-o", path("x.html"), log), "no traced process is named")):
        status, out, err = dpm(*args)
        assert status == 2 and said in err, (args, status, err)
    assert not os.path.exists(path("x.html"))
    status, out, _ = dpm("report", "--help")
    assert status == 0 and "SYNOPSIS" in out and "EXIT STATUS" in out


# ---- the live stream ----

def record_blocks(log):
    """The log's header blocks and its record blocks."""
    data = open(log, "rb").read()
    h = struct.unpack_from("<I", data, 16)[0]
    return data[:h * BLOCK], [data[i:i + BLOCK] for i in range(h * BLOCK, len(data), BLOCK)]


def partly_filled(block, entries):
    """The record block as the filter wrote it when it held only its first `entries` entries."""
    used, offset = struct.unpack_from("<I", block, 12)[0], 32
    for _ in range(entries):
        offset += struct.unpack_from("<H", block, offset)[0]
    assert offset <= 32 + used
    partial = bytearray(block[:offset]) + bytes(BLOCK - offset)
    struct.pack_into("<II", partial, 12, offset - 32, entries)
    return bytes(tracelog_seal(partial, 0))


def stream_of(log, cuts=(1, 3)):
    """The live stream a filter with -l makes of the log: its header, then
    each record block written as it held 1/3, then 2/3 of its entries
    (by default), then whole."""
    header, blocks = record_blocks(log)
    out = header
    for block in blocks:
        n = struct.unpack_from("<I", block, 16)[0]
        out += b"".join(partly_filled(block, n * k // cuts[1]) for k in range(cuts[0], cuts[1])) + block
    return out


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def frames(out):
    return out.split("----\n")


def process_row(frame, label):
    """The figures of a frame's row of process `label`: send/s, receive/s, queue, the changes and marks."""
    rows = frame.split("\n  process ")[1].splitlines()[1:]
    return [l for l in rows if l.startswith("  %s " % label)][0][len(label) + 3:].split()


def test_live_once_gives_the_scenario_figures():
    stream = write("known.bin", stream_of(generate("known", test_dpm.KNOWN)))
    status, out, err = dpm("live", "--once", stream)
    assert status == 0 and err == "" and len(frames(out)) == 1, err
    lines = out.splitlines()
    assert lines[0] == ("dpm live: %s, frame 1: log 1 by filter dpm generate on machine 0; 26 records (+26), 2 lost, "
                        "2 missing in sequence gaps, 0 stream blocks missing" % stream), lines[0]
    assert lines[1] == "interval (guest time): machine 0 3.8 us, machine 1 700 ns"
    assert lines[2] == "traffic in the interval: 4 pairs talked; the top 10 by messages"
    assert [l.split() for l in lines[4:8]] == [
        ["client", "0.17.1", "server", "0.18.1", "4", "664"], ["1.19.1", "kernel", "0.0.1", "1", "40"],
        ["server", "0.18.1", "client", "0.17.1", "1", "32"], ["client", "0.17.1", "kernel", "0.0.1", "1", "16"]]
    # Rates per second of the machine's clock: machine 0 ran 3750 ns, machine 1 700 ns. The client
    # sent 5 and received 1; the server sent 1 and received 4; C on machine 1 sent 1 (one SEND failed).
    assert lines[11].split()[2:5] == ["1333333.3", "266666.7", "0"], lines[11]
    assert lines[12].split()[2:5] == ["266666.7", "1066666.7", "0"], lines[12]
    assert lines[13].split()[1:4] == ["1428571.4", "0.0", "0"], lines[13]
    assert lines[10].split()[2:5] == ["0.0", "533333.3", "0"], lines[10]
    assert not any(l.endswith("*") for l in lines[10:14]), "no interval before the first: no phase change"
    assert lines[14] == ("history of the total message rate (sends/s), 1 frames: \u2588  now 3028571.4, "
                         "max 3028571.4"), lines[14]


def test_live_replays_a_stream_frame_by_frame():
    log = generate("known", test_dpm.KNOWN)
    header, _ = record_blocks(log)
    h = len(header) // BLOCK
    stream = write("known.bin", stream_of(log))
    # Frame 1: the header and the block with 8 of its 26 entries; frame 2: the block again with
    # 17 and whole: only the 18 new records count.
    status, out, err = dpm("live", "--step", str(h + 1), "--interval", "0", "--frames", "3",
                           "--figure", "queue:server", stream)
    assert status == 0 and err == "", err
    one, two, three = frames(out)
    assert "; 8 records (+8), 2 lost" in one and "; 26 records (+18), 2 lost" in two, (one, two)
    assert "; 26 records (+0)" in three and "0 pairs talked" in three, three
    # The first 8 records are A's and B's creations and A's three SENDs to B, each queued: B's queue
    # holds 3 at the end of frame 1 (its 3 messages in the 1500 ns machine 0 ran: 2,000,000/s), none at
    # the end of frame 2 (one more message, the CALL, in 2250 ns: 444,444.4/s, a phase change).
    server = process_row(one, "server 0.18.1")
    assert server[:3] == ["0.0", "2000000.0", "3"], server
    server = process_row(two, "server 0.18.1")
    assert server[:3] == ["444444.4", "444444.4", "0"] and server[-2:] == ["-1555555.6", "*"], server
    assert one.splitlines()[-1] == "history of server's queue length, 1 frames: \u2588  now 3.0, max 3.0"
    assert three.splitlines()[-1] == ("history of server's queue length, 3 frames: "
                                      "\u2588\u2581\u2581  now 0.0, max 3.0"), three
    # Frame 3: nothing new, every rate fell to 0 from something: marked where it was not 0.
    client = process_row(three, "client 0.17.1")
    assert client[:3] == ["0.0", "0.0", "0"] and client.count("*") == 2, client


def test_live_starts_over_at_a_new_log():
    first = stream_of(generate("known", test_dpm.KNOWN))
    second = stream_of(generate("loop", "process P machine 0\nprocess Q machine 0\nrepeat 3\nP send Q 10\n"
                                        "Q receive\nend\n"))
    status, out, err = dpm("live", "--once", write("two.bin", first + second))
    assert status == 0 and err == "", err
    assert ", frame 1: log 2 by filter dpm generate on machine 0; 14 records (+14), 0 lost, 0 missing" in out, out
    assert "client" not in out and re.search(r"0\.16\.1\s+0\.17\.1\s+3\s+30\n", out), out


def test_live_follows_a_growing_stream():
    """tail -f: the stream grows while dpm live runs; each frame counts what arrived."""
    log = generate("known", test_dpm.KNOWN)
    stream = stream_of(log)
    header, _ = record_blocks(log)
    first = len(header) + BLOCK                         # the header and the block holding 8 entries
    target = path("growing.bin")
    with open(target, "wb") as f:
        f.write(stream[:first] + stream[first:first + 100])   # and a piece of the next: left for later
    live = subprocess.Popen([DPM, "live", "--interval", "2", "--frames", "3", target], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
    time.sleep(3)                                        # after frame 1 (2 s), before frame 2 (4 s)
    with open(target, "ab") as f:
        f.write(stream[first + 100:])
    out, err = live.communicate(timeout=60)
    assert live.returncode == 0 and err == "", err
    one, two, three = frames(out)
    assert "; 8 records (+8)" in one and "; 26 records (+18)" in two and "; 26 records (+0)" in three, out


def test_live_refuses_damaged_streams_and_bad_usage():
    log = generate("known", test_dpm.KNOWN)
    header, blocks = record_blocks(log)
    h = len(header) // BLOCK
    garbage = write("garbage.bin", header + partly_filled(blocks[0], 8) + b"\x07" * BLOCK)
    status, out, err = dpm("live", "--once", garbage)
    assert status == 1 and err == ("dpm: %s: record 8: block %d of the stream is neither a log header nor a record "
                                   "block\n" % (garbage, h + 1)), err
    bad = bytearray(blocks[0])
    struct.pack_into("<H", bad, 32, 3)                  # the first entry's length made absurd
    tracelog_seal(bad, 0)                               # found by the entry checks, not the checksum
    damaged = write("damaged.bin", header + bytes(bad))
    status, out, err = dpm("live", "--once", damaged)
    assert status == 1 and err == "dpm: %s: record 0: a damaged entry in block %d of the stream\n" % (damaged, h)
    orphan = write("orphan.bin", blocks[0])
    status, out, err = dpm("live", "--once", orphan)
    assert status == 1 and "record 0: block 0 of the stream is a record block before any log header" in err, err
    # A stream cut inside a block waits for the rest; an empty one for its header.
    cut = write("cut.bin", header + partly_filled(blocks[0], 8) + blocks[0][:1000])
    status, out, err = dpm("live", "--once", cut)
    assert status == 0 and "; 8 records (+8)" in out, out
    status, out, err = dpm("live", "--once", write("empty.bin", b""))
    assert status == 0 and "waiting for a log (no log header in the stream yet)" in out, out
    for args, said in (((), "one stream file"), (("--figure", "speed", cut), "--figure speed: expected rate"),
                       (("--frames", "0", cut), "at least one frame"), (("--interval", "soon", cut), "a number"),
                       (("--bogus", "1", cut), "unknown option '--bogus'")):
        status, out, err = dpm("live", *args)
        assert status == 2 and err.startswith("dpm: usage: ") and said in err, (args, err)
    status, out, err = dpm("live", "--once", path("nothing.bin"))
    assert status == 1 and err == "dpm: %s: No such file or directory\n" % path("nothing.bin"), err
    status, out, _ = dpm("live", "--help")
    assert status == 0 and "SYNOPSIS" in out and "filter start -l" in out
