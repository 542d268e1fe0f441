"""The documents run: every session that README.md and docs/**/*.md show is
executed, and its output compared with what the document says; every relative
link and every code reference in them leads somewhere that exists.

Sessions
--------
A fenced block whose info string is `session` is run:

    ```session
    $ make run NODES=2
    cluster: 2 nodes, switch at /tmp/demos-cluster-…/switch, logs in build/cluster
    …
    $ run @1 hello
    hello from process 1.1.1 on machine 1
    $ echo hi > /note
    $ halt
    …
    $ build/tools/dmfs get build/disk.img /note
    hi
    ```

1. A line beginning with `$ ` is a command; the lines after it, up to the next
   command or the end of the block, are its expected output.
2. `$ make run [VAR=VALUE ...]` boots a cluster: it runs the Makefile's `run`
   target, `make run VAR=VALUE ...`, with node 0's console on a pipe, the VARs
   being those the target reads (NODES, FAULTS, PLACE, TRACE, METER_FS,
   DISK_SERVICE_US, DISK, GDB, LAB; values with spaces quoted as in a shell:
   FAULTS="loss=10 dup=5"), and waits until node 0's shell prompt is there and
   every machine has joined (scripts/cluster.py, wait_joined: the `ps` and
   `netstat` it types for that are not shown). Its output is the launcher's
   start line (`cluster: N nodes, ...`) and node 0's boot, up to its first
   prompt.
3. While a cluster runs, each command is typed into node 0's shell and its
   output is what the shell printed up to the next prompt. The shell has no
   comments: a ` # ` and what follows it on the line is not typed, so a
   document may explain a line as it goes (`$ ps     # every machine's`).
4. `$ halt` (while a cluster runs) halts it: its output is what node 0 printed
   until the launcher ended, and `make run` must end with status 0. A cluster
   may stay up from one block to the next of the same document; a document
   that ends with a cluster running fails. `$ halt` with no cluster running,
   and `$ make run` while one runs, are errors.
5. Every other command (before `make run`, after `halt`) is a host command: it
   is run with `bash -c` in the document's scratch root (below), input empty,
   with a time-out of HOST_TIMEOUT seconds; its output is its stdout and stderr
   together, and it must exit with status 0. To show a command that fails,
   show its status: `$ build/tools/dmfs check bad.img || echo "status $?"`.
6. Expected output is literal, except that `…` (U+2026) within a line matches
   any text on that line, and a line that is only `…` (indented or not)
   matches any number of lines, none included. Trailing whitespace is
   ignored, as are blank lines at the end of an output.
7. In what a node prints, a line printed at any moment rather than by the
   command (harness.ASYNC_LINE: `machine N: ...`, `pm: ...`) and the
   launcher's own lines (`cluster: ...`) are not held to an order: each such
   line the document shows must have come, anywhere in that command's output,
   and those it does not show are ignored.

Blocks whose info string is `sh` are shown, not run (for what a test cannot
run: `make test`, `make experiments`, a second terminal); the suite lists how
many each document has. Any other block with a line beginning with `$ ` fails
the suite (`console`, `shell`, no info string, a misspelt `session`): a
session cannot hide from the test by a typo.

State: each document runs in a scratch root of its own, a fresh directory in
/tmp that looks like the repository: every top-level entry is a symbolic link
to the repository's, except scripts/, a copy (so that a script takes the
scratch root for the repository's top), and build/, whose build products (bin/,
tools/, newlib/, fuzz/, the objects' folders, the .elf files) link to the
repository's and whose build/disk.img is a copy, written by node 0 as `make
run` writes the system disk. A document's blocks run in order in that root, so
what one block writes (a trace log, build/traces/, a file on build/disk.img) is
there for the next, and nothing reaches the repository or the next document;
the root is removed after the document. The commands run as a user's would,
with no NODES, FAULTS, ..., MAKEFLAGS from the test's environment. A block
that fails in `make run` or while its cluster runs ends the cluster and leaves
the document's later blocks unrun (reported as failed): what they would type
into node 0's shell must never run on the host.

`python3 scripts/test.py docs` runs this suite alone; each block is one
result, `docs.DOCUMENT#N (line L: $ FIRST COMMAND)`, and a failure names the
expected line at fault (file:line), what came instead, and the whole output.

Links and code references
-------------------------
Every relative Markdown link, `[text](path)` or `[text](path#anchor)` (and
`[text](#anchor)` within the document), outside code, must name an existing
file, relative to the document; an anchor must be a heading of the target, by
GitHub's rule (lower case; every character but letters, digits, `-`, `_` and
spaces removed; spaces made `-`; a repeated heading gets `-1`, `-2`, ...).

A code reference is an inline code span `PATH:FUNCTION` (or
`PATH:FUNCTION()`), PATH from the repository's top and ending in .c, .h, .S or
.py, e.g. `kernel/msg.c:msg_send` or `scripts/cluster.py:wait_joined`. PATH
must exist and define or declare FUNCTION: in C, a line beginning with a type
and then `FUNCTION(` (or `FUNCTION(` at the line's start, the type on the line
before, or `#define FUNCTION`); in Python, `def FUNCTION` or `class FUNCTION`;
in assembly, the label `FUNCTION:`.
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

from cluster import wait_joined
from harness import ROOT, ASYNC_LINE, ASYNC_LINES, Node

SESSION = "session"             # the info string of a block that is run
SHOWN = "sh"                    # the info string of a session that is shown, not run
ELLIPSIS = "\u2026"
HOST_TIMEOUT = 120              # seconds a host command may take
SHELL_TIMEOUT = 120             # seconds a command typed into node 0 may take
BOOT_TIMEOUT = 60               # seconds `make run` may take to reach node 0's prompt
JOIN_TIMEOUT = 60               # and then every machine to join
HALT_TIMEOUT = 60               # seconds `halt` may take to end the launcher
# The variables of the Makefile's run target (and `make run` reads them from
# the environment too: the commands run without them).
RUN_VARS = ("NODES", "FAULTS", "PLACE", "TRACE", "METER_FS", "DISK_SERVICE_US", "DISK", "GDB", "LAB")
MAKE_ENVIRONMENT = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "LAB")   # LAB: make grade's
DEFAULT_NODES = 4               # the Makefile's NODES ?= 4
# A line a node prints that comes in no fixed order: harness.ASYNC_LINE, or
# the launcher's own (scripts/cluster.py: its start line, a node that exited).
FLOATING = re.compile(r"(?:%s|cluster: [^\n]*\n)" % ASYNC_LINE)
CODE_REFERENCE = re.compile(r"`((?:[\w.-]+/)*[\w.-]+\.(?:c|h|S|py)):([A-Za-z_]\w*)(?:\(\))?`")

runner = None                   # the document being run, for teardown


def teardown():
    if runner:
        runner.close()


# ---------------------------------------------------------------- the tests


def test_matcher():
    """The expected-output matcher on known cases, before it judges the documents."""
    cases = [
        # (expected, actual, floating, mismatch: None or (expected shown, what came))
        (["a", "b"], ["a", "b  "], False, None),
        (["epoch " + ELLIPSIS + ", ok"], ["epoch 4932245, ok"], False, None),
        (["epoch " + ELLIPSIS + ", ok"], ["epoch 4932245, no"], False,
         ("epoch " + ELLIPSIS + ", ok", "epoch 4932245, no")),
        (["a.b (c)"], ["axb (c)"], False, ("a.b (c)", "axb (c)")),
        (["a", ELLIPSIS, "d"], ["a", "b", "c", "d"], False, None),
        (["a", ELLIPSIS, "d"], ["a", "d"], False, None),
        (["a", "  " + ELLIPSIS, "d"], ["a", "b", "d"], False, None),
        ([ELLIPSIS], [], False, None),
        (["a", ELLIPSIS, "d"], ["a", "b", "c"], False, ("d", "(the end of the output)")),
        (["a", "b", "c"], ["a", "x", "c"], False, ("b", "x")),
        (["a", "b"], ["a"], False, ("b", "(the end of the output)")),
        (["a"], ["a", "b"], False, ("(the end of the output)", "b")),
        (["a", "b"], ["a", "machine 0: machine 1 is up (epoch 7)", "b"], True, None),
        (["a", "b"], ["a", "machine 0: machine 1 is up (epoch 7)", "b"], False,
         ("b", "machine 0: machine 1 is up (epoch 7)")),
        (["machine 0: machine 2 " + ELLIPSIS, "machine 0: machine 1 " + ELLIPSIS, "a"],
         ["machine 0: machine 1 is up", "a", "machine 0: machine 2 is up"], True, None),
        (["a", "machine 0: halted"], ["a"], True,
         ("machine 0: halted", "(no such line; those printed at any moment: none)")),
    ]
    for expected, actual, floating, want in cases:
        got = compare(expected, actual, floating)
        shown = None if got is None else (got[1], got[2])
        assert shown == want, "compare(%r, %r): %r, not %r" % (expected, actual, shown, want)
    block = Block("README.md", 10, SESSION, [])
    step = Step(11, "cat /greeting", [(12, "hello")])
    message = mismatch_message(block, 2, step, "node", "hello, world\n", (0, "hello", "hello, world"))
    for part in ("README.md:12:", "expected: hello", "came:     hello, world", "block 2 at README.md:10",
                 "| hello, world"):
        assert part in message, "%r not in the message:\n%s" % (part, message)


def test_link_checker():
    """The link checker on this repository's design page, before it judges the documents."""
    assert check_link("docs/architecture.md", "#the-model") is None
    assert check_link("docs/tsp.md", "architecture.md#where-each-concept-lives") is None
    assert check_link("README.md", "kernel/demos.h") is None
    assert "no heading" in check_link("docs/architecture.md", "#the-models")
    assert "no file" in check_link("docs/tsp.md", "README.md")
    lines = [(1, "see [a](cluster.md) and `[b](shell.md)` and [c](https://e.org)"), (2, "[d]: analyzer.md#q")]
    assert links_in(lines) == [(1, "cluster.md"), (2, "analyzer.md#q")], links_in(lines)


def test_code_reference_checker():
    """The code-reference checker on files that exist, before it judges the documents."""
    assert defines("scripts/cluster.py", "wait_joined")
    assert defines("scripts/cluster.py", "Cluster")
    assert not defines("scripts/cluster.py", "wait_join")
    assert defines("kernel/entry.S", first_label("kernel/entry.S"))
    assert not defines("kernel/entry.S", "no_such_label")
    text = "static int\nlonely(int a)\n{\n}\nstruct x *both(void);\n#define MACRO(a) a\n    called(1);\n"
    assert all(c_defines(text, name) for name in ("lonely", "both", "MACRO"))
    assert not c_defines(text, "called")
    assert [m.groups() for m in CODE_REFERENCE.finditer("see `kernel/msg.c:msg_send()`, `a.c`")] == \
        [("kernel/msg.c", "msg_send")]


def test_every_session_is_run_or_shown():
    """A block with `$ ` lines is either a session that runs or one marked shown (sh)."""
    wrong = []
    for path in documents():
        blocks = fenced_blocks(path)
        run = [b for b in blocks if b.info == SESSION]
        shown = [b for b in blocks if b.info == SHOWN]
        print("  docs: %s: %d session block%s run; %d sh block%s shown, not run%s" % (
            path, len(run), "" if len(run) == 1 else "s", len(shown), "" if len(shown) == 1 else "s",
            " (lines %s)" % ", ".join(str(b.line) for b in shown) if shown else ""))
        wrong += ["%s:%d: a block with `$ ` lines whose info string is %s, neither %s nor %s" %
                  (path, b.line, "%r" % b.info if b.info else "empty", SESSION, SHOWN)
                  for b in blocks if b.info not in (SESSION, SHOWN) and any(is_command(t) for _, t in b.lines)]
    assert not wrong, "\n".join(wrong)


def test_links_lead_to_files_and_headings():
    broken = []
    for path in documents():
        for number, target in links(path):
            problem = check_link(path, target)
            if problem:
                broken.append("%s:%d: (%s): %s" % (path, number, target, problem))
    assert not broken, "%d broken links:\n%s" % (len(broken), "\n".join(broken))


def test_code_references_name_what_exists():
    wrong = []
    count = 0
    for path in documents():
        for number, line in prose_lines(path):
            for m in CODE_REFERENCE.finditer(line):
                count += 1
                source, function = m.groups()
                if not os.path.isfile(os.path.join(ROOT, source)):
                    wrong.append("%s:%d: `%s`: no file %s" % (path, number, m.group(0)[1:-1], source))
                elif not defines(source, function):
                    wrong.append("%s:%d: `%s`: %s defines or declares no %s" %
                                 (path, number, m.group(0)[1:-1], source, function))
    print("  docs: %d code references" % count)
    assert not wrong, "\n".join(wrong)


def test_sessions(report):
    """Run every session block, a document at a time, and compare what came."""
    global runner
    start = time.monotonic()
    failed = total = 0
    for path in documents():
        blocks = [b for b in fenced_blocks(path) if b.info == SESSION]
        if not blocks:
            continue
        began = time.monotonic()
        runner = DocumentRun(path)
        try:
            for index, block in enumerate(blocks, 1):
                problem = runner.run_block(block, index, last=index == len(blocks))
                total += 1
                failed += problem is not None
                first = next((text for _, text in block.lines if is_command(text)), "$ (no command)")
                report("docs.%s#%d (line %d: %s)" % (path, index, block.line, first[:52]),
                       problem is None, problem or "")
        finally:
            runner.close()
            runner = None
        print("  docs: %s: %d session blocks in %.1f s" % (path, len(blocks), time.monotonic() - began))
    print("  docs: %d session blocks in %.1f s" % (total, time.monotonic() - start))
    assert failed == 0, "%d of %d session blocks failed (above)" % (failed, total)


# ---------------------------------------------------------------- documents and their blocks


def documents():
    """README.md and every .md file under docs/ (docs/labs/ too), relative to
    the repository's top."""
    yield "README.md"
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.relpath(os.path.join(dirpath, name), ROOT)


class Block:
    """A fenced block of document `path` opening at line `line`: its info
    string's first word and its lines [(line number, text)], the fence's
    indentation taken off."""
    def __init__(self, path, line, info, lines):
        self.path, self.line, self.info, self.lines = path, line, info, lines

    def steps(self):
        """The block as a session: its commands, each with its expected output."""
        steps = []
        for number, text in self.lines:
            if is_command(text):
                steps.append(Step(number, text[2:], []))
            elif steps:
                steps[-1].expected.append((number, text))
            elif text.strip():
                raise DocError("%s:%d: a session begins with a command (`$ `), not %r" % (self.path, number, text))
        return steps


class Step:
    """A command at line `line` of a document and its expected output [(line number, text)]."""
    def __init__(self, line, command, expected):
        self.line, self.command, self.expected = line, command, expected


class DocError(Exception):
    pass


FENCE = re.compile(r"^( *)(`{3,}|~{3,})(.*)$")


def fenced_blocks(path):
    """Every fenced block of the document at `path` (relative to the top)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, fence = len(m.group(1)), m.group(2)
        words = m.group(3).split()
        block = Block(path, i + 1, words[0] if words else "", [])
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close.group(2)[0] == fence[0] and len(close.group(2)) >= len(fence) and \
                    not close.group(3).strip():
                break
            text = lines[i]
            cut = len(text) - len(text.lstrip(" "))
            block.lines.append((i + 1, text[min(cut, indent):]))
            i += 1
        blocks.append(block)
        i += 1
    return blocks


def is_make_run(command):
    return re.match(r"make\s+run(\s|$)", command) is not None


def is_command(text):
    return text.startswith("$ ") or text.rstrip() == "$"


def prose_lines(path):
    """The document's lines outside fenced blocks, [(line number, text)]."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    inside = {number for block in fenced_blocks(path) for number in
              range(block.line, (block.lines[-1][0] if block.lines else block.line) + 2)}
    return [(n, text) for n, text in enumerate(lines, 1) if n not in inside]


# ---------------------------------------------------------------- running a document's sessions


class DocumentRun:
    """The sessions of one document, run in order in a scratch root of its own;
    the cluster `make run` booted, while it runs."""
    def __init__(self, path):
        self.path = path
        self.root = make_scratch_root()
        self.node = None          # the harness.Node of `make run`: node 0's console
        self.broken = None        # why the document's later blocks are not run
        self.environment = user_environment()

    def close(self):
        self.stop_cluster()
        shutil.rmtree(self.root, ignore_errors=True)

    def run_block(self, block, index, last):
        """Run a block; None if every output was as shown, else what differed.
        A block that fails with a cluster running, or in `make run`, leaves the
        document's later blocks unrun: what they would type into node 0's shell
        must never run on the host."""
        if self.broken:
            return "not run: %s" % self.broken
        step = None
        try:
            for step in block.steps():
                kind, output = self.run_step(step)
                expected = [text for _, text in step.expected]
                mismatch = compare(expected, lines_of(output), kind == "node")
                if mismatch:
                    return self.fail(block, index, step, mismatch_message(block, index, step, kind, output, mismatch))
            if last and self.node:
                return self.fail(block, index, step, "%s:%d: the document's last session ends with the cluster "
                                 "running; end it with `$ halt`" % (block.path, block.lines[-1][0] if block.lines else block.line))
        except Exception as e:
            first, _, rest = str(e).partition("\n")
            return self.fail(block, index, step, "%s (block %d at %s:%d)%s" % (
                first, index, block.path, block.line, "\n" + rest if rest else ""))
        return None

    def fail(self, block, index, step, message):
        """End the cluster after a failed step; return the message."""
        where = "block %d (%s:%d) failed" % (index, block.path, block.line)
        if self.node is not None:
            self.broken = where + " while its cluster ran"
        elif step is not None and is_make_run(step.command):
            self.broken = where + " in `make run`"
        self.stop_cluster()
        return message

    def run_step(self, step):
        """Run one command; return (kind, its output): kind "node" for what node 0
        printed, "host" for a host command's."""
        line = re.sub(r"\s+#(\s.*)?$", "", step.command)
        if self.node is None:
            if is_make_run(step.command):
                return "node", self.make_run(step)
            if line.strip() == "halt":
                raise DocError("%s:%d: `$ halt` with no cluster running (it is never run on the host)" %
                               (self.path, step.line))
            return "host", self.host(step)
        if is_make_run(step.command):
            raise DocError("%s:%d: `$ make run` while a cluster runs; `$ halt` ends it" % (self.path, step.line))
        if line.strip() == "halt":
            return "node", self.halt()
        before = self.node.seen
        out = self.node.command(line, SHELL_TIMEOUT)
        echoed = self.node.output[before:self.node.seen][:-len(out) - 2]
        return "node", floating_in_echo(echoed) + out

    def make_run(self, step):
        """Boot the cluster as `make run VAR=VALUE ...` does; return what it printed
        up to node 0's first prompt, and the lines at any moment until every
        machine had joined."""
        words = shlex.split(step.command, comments=True)[2:]
        for word in words:
            name, equals, _ = word.partition("=")
            if name not in RUN_VARS or not equals:
                raise DocError("%s:%d: `make run` takes VAR=VALUE with VAR one of %s, not %r" %
                               (self.path, step.line, ", ".join(RUN_VARS), word))
        nodes = dict(w.partition("=")[::2] for w in words).get("NODES") or str(DEFAULT_NODES)
        command = ["make", "-s", "--no-print-directory", "-C", self.root, "run", *words]
        self.node = Node(command=command, wait_prompt=False, preexec_fn=os.setsid, env=self.environment)
        boot = self.node.expect(r"\n\$ ", BOOT_TIMEOUT).start() + 1
        joining = self.node.seen
        wait_joined(self.node, int(nodes), JOIN_TIMEOUT)
        joined = self.node.output[joining:self.node.seen]
        return self.node.output[:boot] + "".join(FLOATING.findall(joined))

    def halt(self):
        """`halt`; return what node 0 printed after it, once the launcher has ended."""
        node = self.node
        node.type("halt\n")
        rest = node.read_to_end(HALT_TIMEOUT)
        status = node.proc.wait()
        echo = re.match(r"(?s).*?" + "".join(re.escape(c) + ASYNC_LINES for c in "halt") + "\n", rest)
        self.node = None
        if status != 0:
            raise DocError("`make run` ended with status %d after halt; node 0 printed:\n%s" % (status, rest))
        if not echo:
            return rest
        return floating_in_echo(echo.group(0)) + rest[echo.end():]

    def stop_cluster(self):
        """End `make run` and everything it started (the launcher ends its nodes
        at SIGTERM; SIGKILL if it has not ended after 10 s)."""
        if self.node is None:
            return
        node, self.node = self.node, None
        try:
            os.killpg(node.proc.pid, signal.SIGTERM)
            node.proc.wait(10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(node.proc.pid, signal.SIGKILL)
        node.kill()

    def host(self, step):
        """Run a host command in the scratch root; return its output (stdout and stderr)."""
        proc = subprocess.Popen(["bash", "-c", step.command], cwd=self.root, env=self.environment,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=HOST_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise DocError("%s:%d: `%s` did not end within %d s" % (self.path, step.line, step.command,
                                                                    HOST_TIMEOUT)) from None
        text = out.decode(errors="replace")
        if proc.returncode != 0:
            raise DocError("%s:%d: `%s` exited with status %d (what it printed, below)\n%s" % (
                self.path, step.line, step.command, proc.returncode, quoted(text)))
        return text


def floating_in_echo(echoed):
    """The lines printed at any moment that came within a command's echo: a
    FLOATING line there ends before the echo's own newline."""
    return "".join(m.group(0) for m in FLOATING.finditer(echoed) if m.end() < len(echoed))


def make_scratch_root():
    """A fresh directory that looks like the repository (the module's docstring,
    State): its top-level entries link to the repository's, except scripts/,
    a copy (Python finds a script's folder through symbolic links, and a
    linked scripts/ would take the repository for its top), and build/, where
    the build products link to the repository's and disk.img is a copy."""
    root = tempfile.mkdtemp(prefix="dm-docs-")
    for name in os.listdir(ROOT):
        if name == "scripts":
            shutil.copytree(os.path.join(ROOT, name), os.path.join(root, name),
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif name != "build":
            os.symlink(os.path.join(ROOT, name), os.path.join(root, name))
    build = os.path.join(ROOT, "build")
    os.mkdir(os.path.join(root, "build"))
    for name in os.listdir(build):
        product = (name in ("bin", "tools", "newlib", "fuzz") or name.endswith(".elf") or
                   os.path.isdir(os.path.join(ROOT, name)))
        if name == "disk.img":
            shutil.copyfile(os.path.join(build, name), os.path.join(root, "build", name))
        elif product:
            os.symlink(os.path.join(build, name), os.path.join(root, "build", name))
    return root


def user_environment():
    """The test's environment without what would change `make run` or a sub-make
    (a user at a terminal has none of it set)."""
    return {k: v for k, v in os.environ.items() if k not in RUN_VARS + MAKE_ENVIRONMENT}


# ---------------------------------------------------------------- the matcher


def lines_of(text):
    """The lines of an output, trailing whitespace and blank lines at the end taken off."""
    lines = [line.rstrip() for line in text.replace("\r", "").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def line_pattern(expected):
    """The regex of an expected line: literal, `…` matching any text."""
    return re.compile(".*".join(re.escape(part) for part in expected.rstrip().split(ELLIPSIS)))


def is_gap(expected):
    return expected.strip() == ELLIPSIS


def compare(expected, actual, floating):
    """None when the lines `actual` are as the lines `expected` say, else
    (index of the expected line at fault, that line as shown, what came
    instead); the index is len(expected) when more came than was expected.
    With floating, lines printed at any moment (FLOATING) are taken apart from
    both and each expected one must have come somewhere."""
    actual = [line.rstrip() for line in actual]

    def floats(line):
        return floating and not is_gap(line) and FLOATING.match(line + "\n")

    expected_order = [(i, line) for i, line in enumerate(expected) if not floats(line)]
    expected_any = [(i, line) for i, line in enumerate(expected) if floats(line)]
    actual_order = [line for line in actual if not floats(line)]
    actual_any = [line for line in actual if floats(line)]
    mismatch = compare_in_order([line for _, line in expected_order], actual_order)
    if mismatch:
        k, shown, came = mismatch
        return (expected_order[k][0] if k < len(expected_order) else len(expected), shown, came)
    unused = list(actual_any)
    for i, line in expected_any:
        pattern = line_pattern(line)
        found = next((a for a in unused if pattern.fullmatch(a)), None)
        if found is None:
            return (i, line.rstrip(), "(no such line; those printed at any moment: %s)" %
                    ("; ".join(actual_any) if actual_any else "none"))
        unused.remove(found)
    return None


END = "(the end of the output)"


def compare_in_order(expected, actual):
    """compare() for lines in order: every state (expected line i, actual line j)
    reachable from the start; a match reaches the end of both. A mismatch is
    reported at the furthest expected line reached, with the furthest actual
    line reached there."""
    patterns = [None if is_gap(line) else line_pattern(line) for line in expected]
    seen = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(expected):
            continue
        if patterns[i] is None:
            todo.append((i + 1, j))
            if j < len(actual):
                todo.append((i, j + 1))
        elif j < len(actual) and patterns[i].fullmatch(actual[j]):
            todo.append((i + 1, j + 1))
    if (len(expected), len(actual)) in seen:
        return None
    i, j = max(seen)
    shown = expected[i].rstrip() if i < len(expected) else END
    return i, shown, actual[j] if j < len(actual) else END


def mismatch_message(block, index, step, kind, output, mismatch):
    """What a failed step says: where, the expected line, what came instead, and
    the whole output."""
    i, shown, came = mismatch
    line = step.expected[i][0] if i < len(step.expected) else \
        (step.expected[-1][0] + 1 if step.expected else step.line + 1)
    what = "node 0 printed" if kind == "node" else "the host command printed"
    return ("%s:%d: `$ %s`: not what the document shows (block %d at %s:%d)\n"
            "  expected: %s\n  came:     %s\nwhat %s:\n%s" %
            (block.path, line, step.command, index, block.path, block.line, shown, came, what, quoted(output)))


def quoted(text):
    return "\n".join("  | " + line for line in lines_of(text)) or "  | (nothing)"


# ---------------------------------------------------------------- links


LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")


def links(path):
    """[(line number, target)] of the document's relative links, outside code."""
    return links_in(prose_lines(path))


def links_in(lines):
    """links() of lines [(line number, text)]."""
    found = []
    for number, line in lines:
        line = re.sub(r"(`+).*?\1", "", line)
        targets = LINK.findall(line)
        m = REFERENCE.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if target and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|//", target):
                found.append((number, target))
    return found


def check_link(path, target):
    """None if the link `target` in document `path` leads somewhere, else why not."""
    from urllib.parse import unquote
    file, _, anchor = target.partition("#")
    destination = os.path.normpath(os.path.join(os.path.dirname(path), unquote(file))) if file else path
    full = os.path.join(ROOT, destination)
    if not os.path.exists(full):
        return "no file %s" % destination
    if anchor:
        if not destination.endswith(".md") or os.path.isdir(full):
            return "an anchor into %s, which is not a Markdown document" % destination
        if unquote(anchor) not in anchors(destination):
            return "%s has no heading whose anchor is #%s" % (destination, anchor)
    return None


def anchors(path):
    """The anchors of a document's headings, by GitHub's rule, and those of <a name|id=...>."""
    names = set()
    counts = {}
    for _, line in prose_lines(path):
        names.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
        m = re.match(r"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$", line)
        if not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))     # a link's text
        text = re.sub(r"<[^>]+>", "", text)
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        names.add(slug if n == 0 else "%s-%d" % (slug, n))
    return names


# ---------------------------------------------------------------- code references


def defines(source, function):
    """Whether the file `source` (from the top) defines or declares `function`."""
    with open(os.path.join(ROOT, source), errors="replace") as f:
        text = f.read()
    name = re.escape(function)
    if source.endswith(".py"):
        return bool(re.search(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+%s\b" % name, text, re.M))
    if source.endswith(".S"):
        return bool(re.search(r"^[ \t]*%s:" % name, text, re.M))
    return c_defines(text, function)


def c_defines(text, function):
    """Whether C text defines or declares `function`: a line that begins with a
    type (words, `*`, `__attribute__((...))`) and then `function(`; `function(`
    at a line's start (the type on the line before); or `#define function`."""
    name = re.escape(function)
    typed = r"^(?:[A-Za-z_]\w*(?:\(\([^()]*(?:\([^()]*\)[^()]*)*\)\))?[ \t*]+)*\**%s[ \t]*\(" % name
    return bool(re.search(typed, text, re.M) or re.search(r"^[ \t]*#[ \t]*define[ \t]+%s\b" % name, text, re.M))


def first_label(source):
    with open(os.path.join(ROOT, source)) as f:
        return re.search(r"^[ \t]*([A-Za-z_]\w*):", f.read(), re.M).group(1)

