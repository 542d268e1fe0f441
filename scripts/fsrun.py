"""fsrun.py -- one metered run of the file system, as the experiments
(scripts/fs_study.py, scripts/fs_predict.py) and their tests make it.

A cluster boots with the file system metered from its first instruction
(METER_FS) into the filter `fstrace` on a machine of its own, its
processes placed as asked (PLACE; the disk interface stays on machine 0
with the disk), and one `fsrand` user on each user machine, all at once.
When every user has printed its summary, `sync` writes the cache back and
`fsstat` prints what the file system counted (the truth the traces are
checked against: scripts/fstruth.py); then `halt`, and the log is
extracted from the filter's trace disk."""
import os
import re
import time

from dpmrun import metered_cluster, type_commands, halt, extract, DpmrunError

USER_FIRST_SEED = 1   # user k (from 0) runs with seed USER_FIRST_SEED + k


class Workload:
    """What each user does: `fsrand /uK SIZE_KIB OPS SEED WRITE_PERCENT`."""

    def __init__(self, size_kib, ops, write_percent=30):
        self.size_kib, self.ops, self.write_percent = size_kib, ops, write_percent

    def command(self, user, machine):
        return "run @%d fsrand /u%d %d %d %d %d" % (machine, user, self.size_kib, self.ops,
                                                    USER_FIRST_SEED + user, self.write_percent)

    def __str__(self):
        return "fsrand %d KiB, %d operations, %d%% writes per user" % (self.size_kib, self.ops, self.write_percent)


class FsRun:
    """The outcome of one run: `log` (the trace log), `counts` (fsstat's
    text), `users` (each user's summary line), `place` {name: machine} of
    the four processes, `wall` seconds it took on the host, `user_pids`
    (each user's pid, M.S.G, as the shell gave it) and `window`: the dpm
    options that read the workload's window alone, from the users' first
    request to their last answer (the users are not traced: the file
    system's records of their requests name them)."""

    def __init__(self, log, counts, users, place, wall, user_pids):
        self.log, self.counts, self.users, self.place, self.wall = log, counts, users, place, wall
        self.user_pids = user_pids
        self.window = ["--window-of", ",".join(user_pids)]


def machines(place, users):
    """The cluster's layout: (node count, user machines, filter machine).
    Users and the filter get machines of their own, after those the file
    system uses."""
    first = max([0] + list(place.values())) + 1
    return first + users + 1, list(range(first, first + users)), first + users


# The file system's disk answers each request in this much machine time (the
# kernel's disk.service_us): the emulated disk's own timing follows the host,
# and under -icount it looks longer on an idle machine than on a busy one, so
# traces of one workload placed differently would differ by more than the
# placement (docs/fs-predict.md). About one remote message's delivery time,
# as DEMOS/MP's disk took about one or two (thesis Fig. 5.11).
DISK_SERVICE_US = 100


def run(out, users, place, workload, progress=print, disk_service_us=DISK_SERVICE_US):
    """Boot, run `users` users of `workload` at once, sync, fsstat, halt,
    extract the log into OUT/fstrace.log; returns an FsRun. `place` gives
    bm, dm and ri their machines (di is on 0)."""
    os.makedirs(out, exist_ok=True)
    nodes, user_machines, filter_machine = machines(place, users)
    spec = " ".join("%s=%d" % (name, machine) for name, machine in sorted(place.items()) if name != "di")
    progress("  booting %d nodes: di on 0, %s, users on %s, filter on %d" %
             (nodes, spec, ",".join(map(str, user_machines)), filter_machine))
    start = time.monotonic()
    with metered_cluster(nodes, out, meter_fs=filter_machine, place=spec, disk_service_us=disk_service_us) as cluster:
        node = cluster.node(0)
        since = len(node.output)
        started = type_commands(node, [workload.command(k, m) + " &" for k, m in enumerate(user_machines)],
                                echo=False)
        user_pids = []
        for k, said in enumerate(started):
            pid = re.search(r"\[(\d+\.\d+\.\d+)\] fsrand", said)
            if not pid:
                raise DpmrunError("user %d did not start: %s" % (k, said.strip()))
            user_pids.append(pid.group(1))
        summaries = []
        for k in range(users):
            line = node.expect(r"fsrand /u%d: .*\n" % k, timeout=1800, since=since).group(0).strip()
            if ": ok " not in line:
                raise DpmrunError("user %d failed: %s" % (k, line))
            summaries.append(line)
        progress("  %d users done after %.1f s" % (users, time.monotonic() - start))
        counts = type_commands(node, ["run sync", "run fsstat"], echo=False)[1]
        halt(node, echo=False)
    log = os.path.join(out, "fstrace.log")
    line = extract(os.path.join(out, "trace%d.img" % filter_machine), log)
    if line is None:
        raise DpmrunError("the filter on machine %d wrote no log" % filter_machine)
    progress("  " + line)
    place = dict(place, di=0)
    return FsRun(log, counts, summaries, place, time.monotonic() - start, user_pids)


def user_instructions(summaries):
    """The instructions each user executed, from its summary lines."""
    return [int(re.search(r"instructions=(\d+)", s).group(1)) for s in summaries]
