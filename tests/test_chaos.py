"""The chaos campaign's short run (scripts/chaos.py; docs/testing.md, "The
chaos campaign"): four fixed seeds, on clusters of 1, 2, 3 and 4 nodes, two
of them with frames lost, duplicated and delayed on the wires. Each boots
its cluster on a fresh disk, takes its 60 to 100 random steps (file commands into
small and large files and a full disk, programs here and on other
machines, kill, stop and resume of any process, filters and metering, bad
commands, nodes killed and booted again, halts and power failures) and
halts, every invariant checked after every step and at each halt. A broken
invariant fails the test with the seed, the step, the line that replays
it and the commands typed. `make test-chaos` is the campaign: many seeds,
about 15 minutes."""
import time

import chaos

# (seed, steps, nodes, faults): each run's cluster is given here, not left
# to the seed, so that the run stays the same whatever the campaign's
# choice of clusters.
RUNS = {
    "one_node": (4, 100, 1, "none"),
    "two_nodes_losing_frames": (3, 80, 2, "loss=10 dup=5"),
    "three_nodes": (1, 80, 3, "none"),
    "four_nodes_losing_and_delaying_frames": (2, 60, 4, "loss=5 dup=2 delay=1"),
}


def run(name):
    seed, steps, nodes, faults = RUNS[name]
    start = time.monotonic()
    r = chaos.Run(seed, steps, nodes, faults)
    try:
        summary = r.execute()
    except chaos.Broken as e:
        raise AssertionError(r.report(e)) from None
    print("  note: seed %d: %s (%.0f s)" % (seed, summary, time.monotonic() - start))


def test_one_node():
    run("one_node")


def test_two_nodes_losing_frames():
    run("two_nodes_losing_frames")


def test_three_nodes():
    run("three_nodes")


def test_four_nodes_losing_and_delaying_frames():
    run("four_nodes_losing_and_delaying_frames")
