"""The largest cluster the launcher allows (scripts/cluster.py, MAX_NODES;
docs/cluster.md, "How large a cluster"): every machine boots and joins, `run
@k hello` reports machine k for every k, and a token goes round a ring of
relays on all of them. `make test` boots it once; `make test-large` boots it
LARGE_ROUNDS times (5) and as often under faults on every wire (loss=10 dup=5).
"""
import os
import re
import sys
import time

import cluster as cluster_module
from cluster import Cluster

ROUNDS = int(os.environ.get("LARGE_ROUNDS", "1"))


def note(text):
    """A measurement or a skipped check, in the test output."""
    print("  note    %s" % text)
    sys.stdout.flush()


def boot_join_and_run(faults=None):
    """Boot MAX_NODES nodes (with `faults` on every wire), wait until every machine
    has joined, run hello on each and a token round all of them; note the times."""
    count = cluster_module.MAX_NODES
    start = time.monotonic()
    with Cluster(count, boot_timeout=90, faults=faults) as cluster:
        cluster.wait_joined(timeout=60)
        joined = time.monotonic() - start
        for k in range(count):
            out = cluster.node(0).command("run @%d hello" % k)
            assert re.search(r"hello from process %d\.\d+\.\d+ on machine %d\n" % (k, k), out), out
        out = cluster.node(0).command("run nettest ring %d 2" % count, timeout=120)
        assert re.search(r"nettest ring: the token went round %d machines 2 times and came back" % count, out), out
    note("%d nodes%s booted and joined in %.1f s, everything done in %.1f s on %d cores"
         % (count, " under " + faults if faults else "", joined, time.monotonic() - start, os.cpu_count()))


def test_largest_cluster_boots_and_joins():
    for _ in range(ROUNDS):
        boot_join_and_run()


def test_largest_cluster_under_faults():
    if ROUNDS == 1:
        note("skipped: make test-large boots the largest cluster under faults")
        return
    for _ in range(ROUNDS):
        boot_join_and_run("loss=10 dup=5")
