"""The workloads of the thesis's measurements, on a cluster of 3
nodes: fsseq and fsrand as three concurrent users on machines 0, 1 and 2,
each on its own file, their files then checked on the host; tsp, sync and
pipe, against Held and Karp's optimum computed both in the OS (tsp -d) and
here in Python from the same xorshift numbers (user/lib/workload.h); bad
arguments."""
import os
import re
import shutil
import subprocess
import tempfile

from cluster import Cluster
from harness import DMFS, fnv1a, make_image

MASK = (1 << 64) - 1
SEED_MIX = 0x9e3779b97f4a7c15            # WORKLOAD_SEED_MIX
MAX_DISTANCE = 1000                      # TSP_MAX_DISTANCE, tsp/search.h

workdir = tempfile.mkdtemp(prefix="dm-workloads-")
image = make_image(os.path.join(workdir, "workloads.img"), 32)
cluster = Cluster(3, disk=image)         # closed by teardown() whatever happens
cluster.wait_joined()
summaries = {}                           # path -> the fields of its summary line


def teardown():
    cluster.close()
    shutil.rmtree(workdir, ignore_errors=True)


def xorshift(seed):
    """The numbers of workload.c's prng_next after prng_seed(seed)."""
    x = (seed ^ SEED_MIX) & MASK or 1
    while True:
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
        yield x


def xorshift_bytes(seed, n):
    """prng_fill's n bytes: each number's 8 bytes, least significant first."""
    numbers = xorshift(seed)
    return b"".join(next(numbers).to_bytes(8, "little") for _ in range((n + 7) // 8))[:n]


def distances(cities, seed):
    """tsp_random_problem's matrix."""
    numbers = xorshift(seed)
    d = [[0] * cities for _ in range(cities)]
    for i in range(cities):
        for j in range(i + 1, cities):
            d[i][j] = d[j][i] = 1 + next(numbers) % MAX_DISTANCE
    return d


def held_karp(d):
    """The optimum and the lexicographically smallest optimal tour, as
    `LENGTH: 0 ... 0` (tsp's line), by Held and Karp, independently of the C."""
    n = len(d)
    shortest = {}                        # (set of cities as bits, last city) -> path length from 0
    for s in range(1, 1 << (n - 1)):
        for j in range(1, n):
            if not s >> (j - 1) & 1:
                continue
            before = s & ~(1 << (j - 1))
            shortest[s, j] = d[0][j] if before == 0 else min(
                shortest[before, k] + d[k][j] for k in range(1, n) if before >> (k - 1) & 1)
    left = (1 << (n - 1)) - 1
    rest = min(shortest[left, j] + d[j][0] for j in range(1, n))
    tour, last = [0], 0
    length = rest
    while left:
        nxt = min(c for c in range(1, n) if left >> (c - 1) & 1 and d[last][c] + shortest[left, c] == rest)
        rest -= d[last][nxt]
        left &= ~(1 << (nxt - 1))
        tour.append(nxt)
        last = nxt
    return "%d: %s 0" % (length, " ".join(map(str, tour)))


def run_users(program, commands):
    """Run each (machine, arguments) of `program` at once, all but the last in
    the background; wait for every summary line, keep its fields in
    summaries, and check that nothing failed (the foreground one's exit status
    is shown only if it is not 0)."""
    n = cluster.node(0)
    start = len(n.output)
    # Typed, not n.command(): the processes already running may print in
    # the middle of the shell's echo of the next command line.
    for machine, arguments in commands[:-1]:
        n.type("run @%d %s %s &\n" % (machine, program, arguments))
        n.expect(r"\[%d\.\d+\.\d+\] %s\n" % (machine, program), 60)
    n.type("run @%d %s %s\n" % (commands[-1][0], program, commands[-1][1]))
    for machine, arguments in commands:
        path = arguments.split()[0]
        m = n.expect(r"%s %s: ok (.*)\n" % (program, re.escape(path)), 120, since=start)
        summaries[path] = dict(field.split("=") for field in m.group(1).split())
    assert n.command("echo users done") == "users done\n"
    out = n.output[start:]
    assert "exit status" not in out and not re.search(r"^%s: " % program, out, re.M), out[-2000:]
    return out


def test_fsseq_three_users_at_once():
    out = run_users("fsseq", [(1, "/seq1 256 2 11"), (2, "/seq2 256 2 12"), (0, "/seq0 256 2 10")])
    for k in range(3):
        s = summaries["/seq%d" % k]
        assert s["size"] == "262144" and s["rounds"] == "2" and s["requests"] == "256", out
        assert s["bytes"] == str(4 * 262144) and int(s["ns"]) > 0 and int(s["instructions"]) > 0, out


def test_fsrand_three_users_at_once():
    out = run_users("fsrand", [(0, "/rand0 128 400 20 40"), (2, "/rand2 128 400 22 40"),
                               (1, "/rand1 128 400 21 40")])
    for k in range(3):
        s = summaries["/rand%d" % k]
        assert s["size"] == "131072" and s["ops"] == "400", out
        assert int(s["reads"]) + int(s["writes"]) == 400 and 100 < int(s["writes"]) < 220, out


def test_fsrand_is_deterministic():
    """The same seed gives the same operations and the same file, on any machine."""
    n = cluster.node(0)
    again = n.command("run @1 fsrand /again 128 400 20 40", timeout=120)
    m = re.search(r"fsrand /again: ok (.*)\n", again)
    assert m, again
    fields = dict(field.split("=") for field in m.group(1).split())
    for key in ("reads", "writes", "bytes", "fnv"):
        assert fields[key] == summaries["/rand0"][key], (key, again, summaries["/rand0"])
    assert n.command("rm /again") == ""


def test_tsp_finds_held_and_karps_optimum(report):
    """Both versions with both bounds, servers on machines 1 and 2, give the
    optimum and tour that Held and Karp give, in the OS and here."""
    n = cluster.node(0)
    for cities in (8, 10):
        for seed in (1, 2, 3):
            want = held_karp(distances(cities, seed))
            out = n.command("run tsp -d %d %d" % (cities, seed))
            report("workloads.tsp_d_%d_%d" % (cities, seed), "tsp: optimum %s\n" % want in out,
                   "want %s, got %s" % (want, out))
            for version in ("sync", "pipe"):
                for bound in ("edges", "length"):
                    out = n.command("run tsp -v %s -b %s -s %d %d 2 1,2" % (version, bound, seed, cities), timeout=120)
                    ok = "tsp: optimum %s\n" % want in out and re.search(r"%s: \d+ pieces searched" % version, out)
                    ok = ok and re.search(r"server 0 \(1\.\d+\.\d+ on machine 1\)", out)
                    ok = ok and re.search(r"server 1 \(2\.\d+\.\d+ on machine 2\)", out)
                    report("workloads.tsp_%s_%s_%d_%d" % (version, bound, cities, seed), bool(ok),
                           "want %s, got %s" % (want, out))
    assert "tspserver" not in n.command("ps"), "every server has ended"


def test_tsp_with_two_servers_per_machine():
    want = held_karp(distances(12, 4))
    out = cluster.node(0).command("run tsp -v pipe -s 4 12 4 1,1,2,2", timeout=120)
    assert "tsp: optimum %s\n" % want in out, (want, out)
    pieces = [int(p) for p in re.findall(r"^tsp: server \d \(\S+ on machine \d\): (\d+) pieces", out, re.M)]
    assert len(pieces) == 4 and all(p > 0 for p in pieces), out
    searched = int(re.search(r"pipe: (\d+) pieces searched, (\d+) skipped", out).group(1))
    assert sum(pieces) == searched, out


def test_bad_arguments_give_usage_and_status_2():
    n = cluster.node(0)
    for line in ("fsseq", "fsseq /f 0", "fsseq /f 4k", "fsseq /f 4 0", "fsseq /f 4 1 1 1",
                 "fsrand /f 16", "fsrand /f 16 10 1 101", "fsrand /f 99999 10",
                 "tsp", "tsp 3 1 1", "tsp 17 1 1", "tsp 8 2 1", "tsp 8 1 1,2", "tsp 8 0 1",
                 "tsp -v fast 8 1 1", "tsp -b none 8 1 1", "tsp -s x 8 1 1", "tsp -v sync", "tsp -d 17", "tsp -d 8 1 2", "tspserver"):
        out = n.command("run " + line)
        program = line.split()[0]
        assert re.search(r"^usage: %s " % program, out, re.M) and re.search(
            r"\] %s: exit status 2\n" % program, out), "%s:\n%s" % (line, out)
    out = n.command("run tsp 8 1 7")
    assert "tsp: machine 7: the cluster has machines 0 to 2\n" in out and "exit status 2" in out, out


def test_failures_are_said_with_status_1():
    n = cluster.node(0)
    out = n.command("run fsseq /nowhere/f 4")
    assert out.startswith("fsseq: /nowhere/f: cannot make it: E_NOTFOUND"), out
    assert "fsseq: exit status 1" in out, out
    out = n.command("run fsrand /bin 4 1")
    assert out.startswith("fsrand: /bin: cannot make it: E_STATE"), out
    assert "fsrand: exit status 1" in out, out


def test_the_files_are_intact_on_the_host():
    """After halt: the image is clean, each fsseq file holds its last round's
    bytes (round 1 of seed S: the xorshift stream of S * 65536 + 1), each
    fsrand file the contents whose hash it printed."""
    assert cluster.node(0).halt(timeout=60) == 0
    check = subprocess.run([DMFS, "check", image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert check.returncode == 0, check.stdout.decode()
    for k in range(3):
        got = subprocess.run([DMFS, "get", image, "/seq%d" % k], check=True, stdout=subprocess.PIPE).stdout
        assert got == xorshift_bytes((10 + k) * 65536 + 1, 262144), "/seq%d" % k
        got = subprocess.run([DMFS, "get", image, "/rand%d" % k], check=True, stdout=subprocess.PIPE).stdout
        assert len(got) == 131072 and fnv1a(got) == summaries["/rand%d" % k]["fnv"], "/rand%d" % k
