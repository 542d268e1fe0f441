"""The reliable transport (kernel/net/transport.c) on the host: the simulation
tests/transport_test.c, built with the sanitizers, feeds engines frames by
hand (out-of-order receipt, selective retransmission, eviction), runs
several seeds of loss, duplication, reordering, a reboot and a dead peer,
and two of 10% loss where the DATA frames sent must stay under 1.5 per
fragment needed; it must pass every check and print a summary per run."""
import os
import subprocess
from harness import ROOT

TRANSPORT_TEST = os.path.join(ROOT, "build", "tools", "transport_test")


def test_transport_simulation(report):
    run = subprocess.run([TRANSPORT_TEST], capture_output=True, text=True, timeout=60)
    print(run.stdout, end="")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("a reboot, a dead peer:") >= 4, run.stdout
    assert run.stdout.count("a fragment (at most 1.5;") >= 2, run.stdout
    assert "checks passed" in run.stdout, run.stdout
