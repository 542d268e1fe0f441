"""fstruth.py -- what DPM infers about the file system from its traces,
set against what the file system counted itself (fsstat).

The inference is the thesis's (§5.2.4, Fig. 5.18): from the causality
table, how often a process sent to Y right after receiving from X. The
truth is fsstat's counters (user/lib/fs_protocol.h), read after the workload and a
`sync`, before `halt`. Each check compares two counts that must be equal
and the fraction each side makes of them; docs/fs-study.md defines them.

Why the counts can be equal exactly: the buffer manager serves one request
at a time and talks to the disk interface only by CALL, so after each
request it receives, its next send goes either to the disk interface (it
needs the disk) or back to the requester (the answer); after each answer
from the disk interface, its next send is another disk request ("further
blocks") or the answer. Its own counters (struct bm_requester) count, per
requester, the requests, those during which it sent at least one disk
request, and the disk requests made.

What the trace holds that the counters cannot: the buffer manager's start
(its mount read and its DI_SOUND question, one disk request after a disk
answer: FURTHER_AT_START). `halt`'s final sync, after fsstat, is in
neither: halt ends the metering before it."""

FURTHER_AT_START = 1       # DI_SOUND, sent right after the mount read's answer (fs/bm.c, main)


class Check:
    """One inference against the truth: `inferred` and `counted` are counts
    over the same events, `of_inferred` and `of_counted` what they are
    counted out of (the fraction's denominator)."""

    def __init__(self, name, meaning, inferred, of_inferred, counted, of_counted):
        self.name, self.meaning = name, meaning
        self.inferred, self.of_inferred = inferred, of_inferred
        self.counted, self.of_counted = counted, of_counted

    def holds(self):
        return self.inferred == self.counted and self.of_inferred == self.of_counted

    def fractions(self):
        """(inferred fraction, counted fraction)."""
        return (self.inferred / self.of_inferred if self.of_inferred else 0.0,
                self.counted / self.of_counted if self.of_counted else 0.0)

    def __str__(self):
        inferred, counted = self.fractions()
        return "%-28s trace %6d / %6d = %6.2f%%   counted %6d / %6d = %6.2f%%   %s" % (
            self.name, self.inferred, self.of_inferred, 100 * inferred, self.counted, self.of_counted,
            100 * counted, "exact" if self.holds() else "DIFFERS")


def requester(counts, pid):
    """The buffer manager's (requests, to_disk, disk_requests) for requester `pid`."""
    for who, requests, to_disk, disk_requests in counts["bm_requesters"]:
        if who == pid:
            return requests, to_disk, disk_requests
    return 0, 0, 0


def checks(causality, counts):
    """The truth checks of a file-system run: [Check]. `causality` is
    dpmread.Causality over servers di, bm, dm, ri; `counts` fsstat's
    counters (dpmread.fsstat)."""
    ri_pid, dm_pid = causality.servers[causality.letter("ri")][1], causality.servers[causality.letter("dm")][1]
    ri_requests, ri_to_disk, ri_disk = requester(counts, ri_pid)
    dm_requests, dm_to_disk, dm_disk = requester(counts, dm_pid)
    users = [r for r in counts["bm_requesters"] if r[0] not in (ri_pid, dm_pid)]
    further = sum(disk - to_disk for _, _, to_disk, disk in counts["bm_requesters"]) + FURTHER_AT_START
    user_requests = sum(counts["ri_requests"].values())
    return [
        Check("bm: after ri, to di",
              "requests from the request interpreter after which the buffer manager sent to the disk "
              "interface before answering (the thesis's 27% 'miss rate')",
              causality.count("bm", "ri", "di"), causality.received("bm", "ri"), ri_to_disk, ri_requests),
        Check("bm: after dm, to di",
              "the same for the directory manager's requests",
              causality.count("bm", "dm", "di"), causality.received("bm", "dm"), dm_to_disk, dm_requests),
        Check("bm: after users, to di",
              "the same for requests from outside the file system (sync, fsstat)",
              causality.count("bm", "U", "di"), causality.received("bm", "U"),
              sum(r[2] for r in users), sum(r[2] for r in users)),
        Check("bm: after di, to di",
              "disk answers after which the buffer manager asked the disk again before answering: the "
              "'further blocks' the thesis read as indirect blocks (16.5%)",
              causality.count("bm", "di", "di"), causality.received("bm", "di"),
              further, further + ri_to_disk + dm_to_disk),
        Check("ri: bm requests",
              "requests the request interpreter sent to the buffer manager",
              causality.received("bm", "ri"), causality.received("bm", "ri"),
              counts["ri_bm_requests"], ri_requests),
        Check("ri: after users, to dm",
              "user requests the request interpreter sent on to the directory manager (directory "
              "operations), out of every user request it received",
              causality.count("ri", "U", "dm"), causality.requests_to("ri"),
              counts["ri_dm_requests"], user_requests),
    ]
