"""DPM metering in the running system: the kernel's meter probes,
meter batches and their flow control, and the process manager's metered
creation, attaching, changing and stopping, and inheritance.

user/tests/metertest registers a link of its own with the switchboard, runs
a child metered into it (`pm_meter_run`), takes the batches the child's
kernel sends and compares every record with the calls the child made:
types, order, sequence numbers without a gap, message ids shared by SEND,
MESSAGEQUEUED and RECEIVE, link slots and how each link came and went, the
CALL's answer, MOVEDATA, exit. It runs with the child on machine 0 and on
machine 1 (records written there, batches sent across). Its other modes
flood a stream (50,000 messages; a slow taker, lossless and lossy), attach
metering to a running server, check inheritance and the age bound, and
that metering leaves a process's PROCTIME as it is: the meter's work is
the kernel's."""
import re

from cluster import Cluster
from harness import Node, report_checks

cluster = Cluster(2)   # closed by teardown() whatever happens
cluster.wait_joined()


def teardown():
    cluster.close()


def run_checks(report, command, prefix, least=29):
    return report_checks(report, cluster.node(0).command(command, timeout=240), prefix, "metertest", least)


def test_records_of_a_metered_child_on_this_machine(report):
    run_checks(report, "metertest", "local")


def test_records_of_a_metered_child_on_another_machine(report):
    run_checks(report, "metertest @1", "remote")


def test_metered_run_again_reuses_nothing_stale(report):
    """A second metered run whose checker took the first one's name: the
    process manager looks the filter up again (its first link is dead)."""
    run_checks(report, "metertest", "again")


def test_50000_messages_at_full_speed_leave_no_gap(report):
    out = run_checks(report, "metertest flood 50000", "flood", least=6)
    assert "flood 50000: 200008 records received, 0 lost" in out, out[-800:]


def test_lossless_metering_waits_for_a_slow_filter(report):
    """The checker takes no batch for half a second: far more batches than
    its queue holds are made meanwhile, and none is lost."""
    run_checks(report, "metertest flood 20000 slow", "slow", least=6)


def test_lossy_metering_counts_what_it_loses_exactly(report):
    out = run_checks(report, "metertest flood 5000 lossy slow", "lossy", least=5)
    m = re.search(r"flood 5000: (\d+) records received, (\d+) lost", out)
    assert m and int(m.group(1)) + int(m.group(2)) == 20008 and int(m.group(2)) > 0, out[-800:]


def test_batches_from_another_machine_leave_no_gap(report):
    run_checks(report, "metertest flood 20000 @1", "flood1", least=6)


def test_attach_stop_resume_flags_and_off_on_a_running_server(report):
    run_checks(report, "metertest attach", "attach", least=15)


def test_children_inherit_metering_unless_told_not_to(report):
    run_checks(report, "metertest inherit", "inherit", least=2)
    run_checks(report, "metertest inherit -n", "inherit_n", least=2)


def test_a_batch_goes_when_its_first_record_is_old_enough(report):
    run_checks(report, "metertest age", "age", least=1)


def test_metering_leaves_proctime_as_it_is(report):
    """A client's and its server's PROCTIME over 2,000 rounds of SEND to
    itself and RECEIVE, CALL, links made, copied and destroyed, and
    MOVEDATA (about 15 records a round): metered, each is its unmetered
    PROCTIME within 0.5 %, and so is the client's PROCTIME in its records
    from its first round to its last."""
    out = run_checks(report, "metertest proctime", "proctime", least=4)
    m = re.search(r"proctime: worker (\d+) unmetered, (\d+) metered, (\d+) in its records; server (\d+), (\d+)", out)
    assert m, out[-800:]
    worker, worker_metered, in_records, server, server_metered = (int(g) for g in m.groups())
    assert abs(worker_metered - worker) * 200 <= worker and abs(in_records - worker) * 200 <= worker, m.group(0)
    assert abs(server_metered - server) * 200 <= server, m.group(0)


def test_meter_command_errors():
    node = cluster.node(0)
    out = node.command("meter -F nosuch run hello")
    assert "run: hello: no such program, or no filter called nosuch" in out, out
    out = node.command("meter -e SEND,bogus run hello")
    assert "meter: bogus: no such event" in out, out
    out = node.command("meter -a 0 run hello")
    assert "meter: -a 0: a maximum age in ms" in out, out
    out = node.command("meter")
    assert "meter: usage:" in out, out
    out = node.command("meter off 0.99.1")
    assert "meter: 0.99.1: no such process or filter" in out, out


def test_unmetered_programs_make_no_records():
    """Without metering no record is written: the kernel's meter counters,
    printed at halt when there were records, stay silent; with metering
    they are printed (the check can fail)."""
    node = Node()
    try:
        node.command("hello")
        node.type("halt\n")
        node.expect(r"machine 0: halted\n", timeout=20)
        assert "net:" in node.output or "halted" in node.output
        assert "meter:" not in node.output, node.output[-1500:]
    finally:
        node.kill()


def test_metered_runs_are_counted_at_halt():
    node = Node()
    try:
        out = node.command("metertest")
        assert "metertest: 29 passed, 0 failed" in out, out[-1500:]
        node.type("halt\n")
        m = node.expect(r"machine 0: meter: (\d+) records, (\d+) batches taken, 0 dropped \(lossy\), "
                        r"0 orphaned, 0 lost for room", timeout=20)
        assert int(m.group(1)) == 27 and int(m.group(2)) == 1, m.group(0)
    finally:
        node.kill()
