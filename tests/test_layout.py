"""The layout of the source (docs/architecture.md, "Where each concept lives"):
the includes between top-level folders point one way, with no cycle; no two
source files share a name for different jobs; and every file of the
repository that a comment or a document names by its path exists."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ["kernel", "meter", "user", "servers", "fs", "filter", "analysis", "tools", "tests"]
SOURCE = (".c", ".h", ".S")
# Where an include by bare name is looked for, as the Makefile's -I flags
# have it: the including file's own folder first, then these.
SEARCH = ["kernel", "kernel/net", "fs", "user/lib", "meter", "analysis", "tests", "tools"]


def sources():
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for f in files:
                if f.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def resolve(including, name):
    for base in [os.path.dirname(including)] + SEARCH:
        path = os.path.normpath(os.path.join(base, name))
        if os.path.exists(os.path.join(ROOT, path)):
            return path
    return None


def folder_graph():
    edges = {}
    for path in sources():
        with open(os.path.join(ROOT, path), errors="replace") as f:
            for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M):
                target = resolve(path, name)
                if target is None:
                    continue
                a, b = path.split("/")[0], target.split("/")[0]
                if a != b:
                    edges.setdefault(a, {}).setdefault(b, []).append("%s -> %s" % (path, target))
    return edges


def test_includes_between_folders_have_no_cycle():
    edges = folder_graph()
    # Depth-first search for a cycle; report it with one include per step.
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, {})):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                steps = [edges[x][y][0] for x, y in zip(cycle, cycle[1:])]
                raise AssertionError("include cycle %s: %s" % (" -> ".join(cycle), "; ".join(steps)))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_the_kernel_includes_only_the_record_layouts():
    outside = [i for target, incs in folder_graph().get("kernel", {}).items() for i in incs
               if not i.endswith("meter/record.h")]
    assert not outside, "the kernel includes from outside kernel/: %s" % outside


def test_no_two_source_files_share_a_name():
    seen = {}
    for path in sources():
        if path.startswith("tests/"):
            continue
        seen.setdefault(os.path.basename(path), []).append(path)
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not shared, "files that share a name: %s" % shared


def documents():
    """README.md and every .md file under docs/ (docs/labs/ too)."""
    yield "README.md"
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.relpath(os.path.join(dirpath, f), ROOT)


PATH = re.compile(r"(?<![/\w.-])((?:kernel|meter|user|servers|fs|filter|analysis|tools|tests|scripts|docs|labs)"
                  r"/[A-Za-z0-9_./-]*[A-Za-z0-9_])")


def named_paths(text):
    for path in PATH.findall(text):
        path = path.rstrip(".")
        if "*" in path or path.endswith("/"):
            continue
        yield path


def exists(named, folder):
    """A file of the repository, or a program made from one (tools/dmfs,
    user/tests/kfuzz, user/programs/hello.elf: built from NAME.c), from the
    repository's top or from `folder`, the naming file's own (a document's
    links are relative to it: docs/shell.md's labs/links.md)."""
    if "NAME" in named:
        return True
    base = named[:-4] if named.endswith(".elf") else named
    return any(os.path.exists(os.path.join(ROOT, top, p)) for top in ("", folder) for p in (named, base + ".c"))


def test_every_file_a_comment_or_document_names_exists():
    missing = []
    for path in list(sources()) + list(documents()):
        with open(os.path.join(ROOT, path), errors="replace") as f:
            text = f.read()
        for named in named_paths(text):
            if not exists(named, os.path.dirname(path)):
                missing.append("%s names %s" % (path, named))
    assert not missing, "%d missing: %s" % (len(missing), "; ".join(sorted(set(missing))[:40]))


def test_nothing_cites_a_file_outside_the_repository():
    outside = re.compile(r"DESIGN\.md|DPM-ANALYSES|MIGRATION-NOTES|PLATFORM-NOTES|STYLE\.md|\.\./shared|\bshared/")
    found = []
    for path in list(sources()) + list(documents()) + ["Makefile"]:
        with open(os.path.join(ROOT, path), errors="replace") as f:
            for number, line in enumerate(f, 1):
                if outside.search(line):
                    found.append("%s:%d" % (path, number))
    assert not found, "cites a file outside the repository: %s" % ", ".join(found)
