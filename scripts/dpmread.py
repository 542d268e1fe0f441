"""dpmread.py -- run the analyzer (build/tools/dpm) and fsstat's counters into
Python values, for the experiments (scripts/fs_study.py, fs_predict.py,
tsp_study.py) and their tests.

Each function reads what one command prints, in the form its --help
documents; a line it cannot read raises ReadError naming the command."""
import csv
import os
import re
import subprocess
import tempfile

from dpmrun import DPM

# dpm parallelism --csv's step names -> the short names used here.
STEPS = {"1 upper bound": "1", "2 delivery times": "2", "3 contention, thesis Appendix A": "3a",
         "3 contention, elapsed-time simulation": "3"}


class ReadError(Exception):
    pass


def run_dpm(*args):
    """`dpm ARGS...`'s standard output; ReadError with its message if it fails."""
    done = subprocess.run([DPM, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise ReadError("dpm %s: %s" % (" ".join(args), done.stderr.strip()))
    return done.stdout


def placement_args(place):
    """dpm's placement option for `place`: None (as measured), "each-own",
    "all-one", or a dict {process name: machine}."""
    if place is None:
        return []
    if place in ("each-own", "all-one"):
        return ["--" + place]
    return ["--place", ",".join("%s=%d" % item for item in sorted(place.items()))]


def parallelism(logs, place=None, window=(), network=None):
    """P in DPM's steps for the logs under a placement (placement_args), in
    a window (dpm's options, e.g. ["--window-of", "1.2.1"]; none: the whole
    logs) and on a network (a name or file for --network; None: dpm's
    default): {"1"|"2"|"3a"|"3": (T, t_max, P, outside_ns, t_max_plain,
    P_plain)}; "3a" is the thesis's Appendix A, "3" the elapsed-time
    simulation; outside_ns the part of t_max on requests outside the trace
    (thesis Fig. 5.3B), the last two the plain graph's (Fig. 5.3A)."""
    options = list(window) + (["--network", network] if network else [])
    out = run_dpm("parallelism", "--csv", *placement_args(place), *options, *logs)
    steps = {}
    for row in csv.reader(out.splitlines()[1:]):
        name = next((short for prefix, short in STEPS.items() if row[0].startswith(prefix)), None)
        if name is None:
            raise ReadError("dpm parallelism: unknown step %r" % row[0])
        steps[name] = (int(row[1]), int(row[2]), float(row[3]), int(row[4]), int(row[5]), float(row[6]))
    if set(steps) != set(STEPS.values()):
        raise ReadError("dpm parallelism: steps %s, not %s" % (sorted(steps), sorted(STEPS.values())))
    return steps


def networks():
    """The names of the networks shipped with dpm (analysis/networks/NAME.tsv)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "analysis", "networks")
    return sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".tsv"))


def stats_table(logs, name, window=()):
    """One table of `dpm stats --csv` over the logs, as a list of dicts
    (numbers as floats): "processes" (a row per process: pid, label, machine,
    traced, sent, cpu, cpu_pct, messages_pct, bytes_pct, queue_max,
    queue_time_mean, ...) or "pairs" (from, from_label, to, to_label,
    messages, bytes, local). A pid (M.S.G) stays a string."""
    with tempfile.TemporaryDirectory(prefix="dpmread-") as tables:
        run_dpm("stats", *window, "--csv", tables, *logs)
        with open(os.path.join(tables, name + ".csv")) as f:
            rows = list(csv.DictReader(f))
    for row in rows:
        for key, value in row.items():
            if re.fullmatch(r"-?\d+(\.\d+)?", value):
                row[key] = float(value)
    return rows


def processes(logs, window=()):
    """dpm stats's processes table (stats_table)."""
    return stats_table(logs, "processes", window)


class Causality:
    """What `dpm causality --server ...` printed: servers[letter] = (name, pid);
    after[server letter][from letter or "U"][to letter] = count (the
    "receives from X, then sends to Y" table, thesis Fig. 5.18); strings
    {string: count}."""

    def __init__(self, text):
        head = re.search(r"through \d+ servers: (.*)$", text, re.M)
        if not head:
            raise ReadError("dpm causality: no line naming the servers")
        self.servers = {}
        for letter, name, pid in re.findall(r"([A-Za-z]) = (?:(\S+) )?(\d+\.\d+\.\d+)", head.group(1)):
            self.servers[letter] = (name, pid)
        self.strings = {}
        section = text.split("strings, most frequent first", 1)[1].split("\npaths:", 1)[0]
        for count, string in re.findall(r"^\s+(\d+)\s+([A-Za-z]+)$", section, re.M):
            self.strings[string] = int(count)
        self.after = {}
        table = text.split("receives from X", 1)[1]
        server = None
        for line in table.splitlines()[1:]:
            named = re.match(r"^  ([A-Za-z])  \S", line)
            row = re.match(r"^      ([A-Za-z])((?:\s+\d+\s+[0-9.]+%)+)$", line)
            if named:
                server = named.group(1)
                self.after[server] = {}
            elif row and server:
                counts = [int(c) for c in re.findall(r"(\d+)\s+[0-9.]+%", row.group(2))]
                self.after[server][row.group(1)] = dict(zip(sorted(self.servers), counts))

    def letter(self, name):
        """The letter of the server named `name`."""
        for letter, (server, _) in self.servers.items():
            if server == name:
                return letter
        raise ReadError("dpm causality: no server named %s" % name)

    def count(self, server, source, destination):
        """How often `server` sent to `destination` right after receiving from
        `source` (names, or "U" for the requestors); 0 if never."""
        row = self.after.get(self.letter(server), {}).get(source if source == "U" else self.letter(source), {})
        return row.get(self.letter(destination), 0)

    def received(self, server, source):
        """How often `server`, after receiving from `source`, sent to a server."""
        row = self.after.get(self.letter(server), {}).get(source if source == "U" else self.letter(source), {})
        return sum(row.values())

    def requests_to(self, server):
        """How many requests from requestors `server` received: the strings
        that begin with its letter."""
        letter = self.letter(server)
        return sum(n for s, n in self.strings.items() if s[0] == letter)


def causality(logs, servers, max_length=64):
    """Causality of `dpm causality --server SERVERS` over the logs."""
    return Causality(run_dpm("causality", "--server", ",".join(servers), "--max-length", str(max_length), *logs))


def fsstat(text):
    """fsstat's counters (user/programs/fsstat.c) as a dict: di_reads, di_writes,
    bm_hits, bm_misses, bm_inode_reads, bm_indirect_reads, bm_bitmap_reads,
    bm_mount_reads, bm_writebacks, bm_sync_writes, bm_state_writes;
    bm_requesters [(pid or "others", requests, to_disk, disk_requests)];
    dm_requests {kind: n}, dm_bm_requests; ri_requests {kind: n},
    ri_bm_requests, ri_dm_requests."""
    def number(pattern):
        found = re.search(pattern, text)
        if not found:
            raise ReadError("fsstat: no %r in:\n%s" % (pattern, text))
        return int(found.group(1))

    def kinds(section):
        block = text.split(section, 1)[1]
        line = re.search(r"requests:((?: \w+ \d+)+)", block).group(1)
        return {kind: int(n) for kind, n in re.findall(r"(\w+) (\d+)", line)}

    counts = {"di_reads": number(r"reads (\d+)  writes"), "di_writes": number(r"writes (\d+)  errors"),
              "bm_hits": number(r"hits (\d+)"), "bm_misses": number(r"misses (\d+)"),
              "bm_inode_reads": number(r"inodes (\d+)"), "bm_indirect_reads": number(r"indirect blocks (\d+)"),
              "bm_bitmap_reads": number(r"bitmap (\d+)"), "bm_mount_reads": number(r"mount (\d+)"),
              "bm_writebacks": number(r"write-back (\d+)"), "bm_sync_writes": number(r"sync (\d+)  superblock"),
              "bm_state_writes": number(r"superblock (\d+)")}
    counts["bm_requesters"] = [(pid, int(a), int(b), int(c)) for pid, a, b, c in re.findall(
        r"from (\S+): requests (\d+)  to the disk (\d+)  disk requests (\d+)", text)]
    counts["dm_requests"] = kinds("directory manager:")
    counts["ri_requests"] = kinds("request interpreter:")
    counts["dm_bm_requests"] = number(r"directory manager:\n.*\n  requests to the buffer manager (\d+)")
    counts["ri_bm_requests"] = number(r"requests to the buffer manager (\d+)  to the directory")
    counts["ri_dm_requests"] = number(r"to the directory manager (\d+)")
    return counts
