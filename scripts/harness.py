"""harness.py -- boot QEMU nodes and talk to their shells, for tests and benchmarks.

A Node is one QEMU machine whose console is a pipe: the harness types
commands into the shell and reads what it prints, expect-style.

    node = Node()                  # boots build/kernel.elf under -icount
    out = node.command("run hello")   # text printed before the next prompt
    node.halt()                    # `halt`, then waits for QEMU to exit

Every test that boots a node fails if its kernel answered a request over a
kernel link with an error that demos.h does not list for that request: the
kernel prints a line (kernel/kreq.c, check_answer), and the harness looks
for it in everything the node printed when the node ends (Node.kill, which
halt(), `with`, Cluster.close and Cluster.restart all end with) and, for the
nodes still running, after each test (scripts/test.py, check_live_nodes).
"""
import codecs
import os
import re
import select
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "build", "kernel.elf")
SYSTEM_DISK = os.path.join(ROOT, "build", "disk.img")   # /bin: every program (Makefile)
BIN = os.path.join(ROOT, "build", "bin")
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
PROMPT = "\n$ "


class NodeError(Exception):
    pass


# The line a kernel prints when it answers a request with an error that the
# request's entry in demos.h (DM_KOPS) does not name (kernel/kreq.c).
UNLISTED_ERROR = re.compile(r"kernel: [^\n]* answered [^\n]*, which demos\.h does not list for it")


def assert_no_unlisted_errors(text, where):
    """AssertionError naming every such line in `text`, printed by `where`."""
    lines = UNLISTED_ERROR.findall(text)
    if lines:
        raise AssertionError("%s printed: %s" % (where, "; ".join(lines)))


def disk_args(path, index=0, snapshot=False):
    """QEMU arguments that attach disk image `path` as virtio-blk disk `index`
    (with snapshot, writes go to a temporary copy and the image is unchanged)."""
    return ["-drive", "file=%s,if=none,format=raw,id=d%d%s" % (path, index, ",snapshot=on" if snapshot else ""),
            "-device", "virtio-blk-device,drive=d%d" % index]


def trace_disk_args(path):
    """QEMU arguments that attach the trace disk image `path` (dmtrace blank makes
    one) as a virtio-blk disk after those already given: the node's last disk."""
    return ["-drive", "file=%s,if=none,format=raw,id=trace" % path, "-device", "virtio-blk-device,drive=trace"]


def live_channel_args(path):
    """QEMU arguments that give a node its live trace channel: a virtio console
    whose bytes are appended to the host file `path` (kernel/dev/virtio_console.c;
    a filter started with -l streams its log through it)."""
    return ["-chardev", "file,id=live,path=%s,append=on" % path, "-device", "virtio-serial-device",
            "-device", "virtconsole,chardev=live"]


def run_make(*targets, input=b"", timeout=60):
    """Runs `make -s TARGETS...` with `input` piped in, in a process group of
    its own, so that on a timeout everything it started (the launcher, QEMU,
    the switch) is killed with it. Returns (exit status, output text)."""
    import signal
    import subprocess
    proc = subprocess.Popen(["make", "-s", "--no-print-directory", *targets], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise NodeError("make %s did not end within %d s:\n%s" % (" ".join(targets), timeout,
                                                                  out.decode(errors="replace")[-3000:]))
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)   # anything it left behind
        except ProcessLookupError:
            pass
    text = out.decode(errors="replace").replace("\r", "")
    assert_no_unlisted_errors(text, "make %s" % " ".join(targets))
    return proc.returncode, text


def make_image(path, size_mb, *specs, inodes=None):
    """A fresh file-system image at `path` holding every program in /bin (as
    the system disk does) and each HOSTFILE=PATH in specs."""
    import subprocess
    programs = ["%s=/bin/%s" % (os.path.join(BIN, p), p) for p in sorted(os.listdir(BIN))]
    options = ["--inodes", str(inodes)] if inodes else []
    subprocess.run([DMFS, "mkfs", "--force", *options, path, str(size_mb), *programs, *specs], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def fnv1a(data):
    """FNV-1a, 64 bits, as hex: the checksum the in-OS test programs print."""
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h


TRACELOG_CHECKSUM_SEED = 0x9e3779b97f4a7c15
TRACELOG_CHECKSUM_PRIME = 4294966187


def tracelog_checksum(data):
    """The checksum of `data` as meter/tracelog.c computes it (meter/tracelog.h,
    tracelog_checksum): Fletcher's two running sums, modulo 2^64, over its
    little-endian 64-bit words (the last padded with zero bytes), from the
    seed plus its length; then (a + 2b) modulo the prime."""
    mask = (1 << 64) - 1
    a, b = (TRACELOG_CHECKSUM_SEED + len(data)) & mask, 0
    for at in range(0, len(data), 8):
        a = (a + int.from_bytes(data[at:at + 8], "little")) & mask
        b = (b + a) & mask
    return ((a + 2 * b) & mask) % TRACELOG_CHECKSUM_PRIME


TRACELOG_BLOCK = 4096


def tracelog_seal(data, index):
    """Write record block `index` of the trace log in `data` (a bytearray) its
    checksum again (meter/tracelog.h: tracelog_checksum of the block with the
    checksum, bytes 20..23, as 0), as the filter does after changing it: for tests
    that damage an entry and want the entry checks, not the checksum, to
    find it. Returns data."""
    at = index * TRACELOG_BLOCK
    block = bytearray(data[at:at + TRACELOG_BLOCK])
    block[20:24] = bytes(4)
    data[at + 20:at + 24] = tracelog_checksum(bytes(block)).to_bytes(4, "little")
    return data


def report_checks(report, out, prefix, program, least):
    """Report each `ok NAME` / `not ok NAME: why` line an in-OS test program
    printed as the test PREFIX.NAME; assert there were at least `least` and
    that the program's summary says none failed. Returns the output."""
    checks = 0
    for m in re.finditer(r"^(ok|not ok) (\S+)(?:: (.*))?$", out, re.M):
        checks += 1
        report("%s.%s" % (prefix, m.group(2)), m.group(1) == "ok", m.group(3) or "")
    assert checks >= least, out[-2000:]
    assert re.search(r"%s: \d+ passed, 0 failed" % program, out), out[-1500:]
    return out


_last_epoch = 0


def fresh_epoch():
    """A boot epoch for a node about to start: the host's clock in milliseconds,
    24 bits (wrapping every 4.7 hours), never 0 and never the last one given
    here. Two boots of one machine are more than a millisecond apart, so each
    boot gets its own (the kernel reads it from its boot arguments, kernel/fdt.c;
    QEMU's RTC alone repeats within a second)."""
    global _last_epoch
    epoch = (time.time_ns() // 1000000) & 0xffffff
    if epoch == 0 or epoch == _last_epoch:
        epoch = _last_epoch % 0xffffff + 1
    _last_epoch = epoch
    return epoch


def qemu_command(kernel=KERNEL, memory="256M", extra=(), bootargs="", trace_disk=None, live=None):
    """The QEMU command line of one node, console on stdin/stdout, plus `extra`;
    `bootargs` are more boot arguments after the epoch (e.g. "place.bm=1");
    `trace_disk`, an image attached after every disk in `extra` (trace_disk_args);
    `live`, the host file its live trace channel appends to (live_channel_args).
    The one definition: the tests, the benchmarks and the cluster launcher
    (scripts/cluster.py, so `make run` and `make gdb` too) all start nodes with it."""
    return ["qemu-system-riscv64", "-M", "virt", "-bios", "none", "-m", memory, "-smp", "1",
            "-kernel", kernel, "-display", "none", "-monitor", "none", "-serial", "stdio",
            "-no-reboot", "-global", "virtio-mmio.force-legacy=false",
            "-icount", "shift=0,sleep=on", "-append", ("epoch=%d %s" % (fresh_epoch(), bootargs)).strip(),
            *extra, *(trace_disk_args(trace_disk) if trace_disk else []),
            *(live_channel_args(live) if live else [])]


# A line printed at any moment, not by the command being run: the kernel's
# notes of other machines and the process manager's complaints; and any
# number of them.
ASYNC_LINE = r"(?:machine \d+|pm): [^\n]*\n"
ASYNC_LINES = r"(?:%s)*" % ASYNC_LINE

# Every Node that kill() has not ended yet.
live_nodes = []


def check_live_nodes():
    """Node.check_kernel_lines for every node still running: one AssertionError
    naming every line found (scripts/test.py calls it after each test)."""
    found = []
    for node in list(live_nodes):
        try:
            node.check_kernel_lines()
        except AssertionError as e:
            found.append(str(e))
    if found:
        raise AssertionError("; ".join(found))


class Node:
    """A node; without a disk in `extra` it boots from the system disk (build/disk.img),
    in snapshot mode so that tests never change it. With `command`, that whole command
    line is started instead (the cluster launcher passes its own; preexec_fn is run in
    the child before it starts, as subprocess.Popen does; env, its environment,
    by default this process's; bootargs, more boot arguments, as qemu_command takes them)."""
    def __init__(self, extra=(), boot_timeout=20, wait_prompt=True, kernel=KERNEL, command=None,
                 preexec_fn=None, env=None, bootargs=""):
        if command is None:
            if "-drive" not in extra:
                extra = disk_args(SYSTEM_DISK, 0, snapshot=True) + list(extra)
            command = qemu_command(kernel, extra=extra, bootargs=bootargs)
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, bufsize=0, preexec_fn=preexec_fn, env=env)
        self.output = ""      # everything the node printed
        self.seen = 0         # how much of output expect() has consumed
        self.checked = 0      # how much of output check_kernel_lines has looked at
        live_nodes.append(self)
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")   # a character may span two reads
        if wait_prompt:
            try:
                self.expect(re.escape("$ "), boot_timeout)
            except BaseException:
                self.kill()          # a node that did not boot must not be left running
                raise

    def _read(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return False
        data = os.read(self.proc.stdout.fileno(), 65536)
        if not data:
            raise NodeError("the node exited (status %s); it printed:\n%s" %
                            (self.proc.wait(), self.output[-3000:]))
        self.output += self.decoder.decode(data).replace("\r", "")
        return True

    def expect(self, pattern, timeout=30, since=None):
        """Wait until regex `pattern` appears after what was consumed (or after
        position `since`, for output of background processes); return the match."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            m = regex.search(self.output, self.seen if since is None else since)
            if m:
                self.seen = max(self.seen, m.end())
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise NodeError("timed out after %ss waiting for %r; the node printed:\n%s" %
                                (timeout, pattern, self.output[self.seen:][-3000:]))
            self._read(min(left, 1.0))

    def type(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def command(self, line, timeout=60):
        """Type a command at the prompt; return what it printed before the next prompt.
        The echo may be broken by a line the kernel or the process manager prints
        meanwhile ("machine 0: machine 1 is up ..."): such lines may stand between
        the echo's characters."""
        self.type(line + "\n")
        self.expect("".join(re.escape(c) + ASYNC_LINES for c in line) + "\n", timeout)
        start = self.seen
        self.seen -= 1          # the echo's newline may be the prompt's too
        m = self.expect(re.escape(PROMPT), timeout)
        return self.output[start:m.start() + 1]

    def read_to_end(self, timeout=30):
        """Read until the console closes, that is until QEMU has ended (after
        `halt`); return what the node printed after what expect() consumed, and
        consume it. NodeError if QEMU has not ended within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise NodeError("the node did not end within %ss; it printed:\n%s" %
                                (timeout, self.output[self.seen:][-3000:]))
            try:
                self._read(min(left, 1.0))
            except NodeError:
                break                   # the end of the console: QEMU has ended
        text = self.output[self.seen:]
        self.seen = len(self.output)
        return text

    def halt(self, timeout=20):
        """`halt` the node; return QEMU's exit status."""
        self.type("halt\n")
        try:
            return self.proc.wait(timeout)
        finally:
            self.kill()

    def kill(self):
        """End the node's QEMU (if it still runs), read what it printed to the
        end, and close its pipes; then check_kernel_lines on all of it."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._drain(1.0)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        if self in live_nodes:
            live_nodes.remove(self)
        self.check_kernel_lines(to_the_end=True)

    def printed(self):
        """Everything the node has printed so far, read without waiting (what
        expect() has consumed, and what it has not)."""
        self._drain(0)
        return self.output

    def _drain(self, wait):
        """Read what the node has printed and no one has read: until it has
        ended, or nothing more comes within `wait` seconds."""
        if self.proc.stdout.closed:
            return
        try:
            while self._read(wait):
                pass
        except NodeError:
            pass                 # it has ended, and all it printed is read

    def check_kernel_lines(self, to_the_end=False):
        """AssertionError naming every line that the node's kernel printed,
        since the last check, because it answered a request with an error
        demos.h does not list for that request. Reads first what the node has
        printed; looks at whole lines only, unless to_the_end."""
        self._drain(0)
        end = len(self.output) if to_the_end else self.output.rfind("\n", self.checked) + 1
        if end <= self.checked:
            return
        text, self.checked = self.output[self.checked:end], end
        machine = re.search(r"DEMOS/MP kernel: machine (\d+) of", self.output)
        assert_no_unlisted_errors(text, "machine %s" % machine.group(1) if machine else "a node")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
