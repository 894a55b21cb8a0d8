"""What the docs name exists: every module (``*.py``) that README.md, docs/*.md,
benchmarks/README.md and benchmarks/PROFILE.md name is a file of the repository, every
class of ours they name in backticks is a class of the package, every link to a section
(``file.md#anchor``) finds its heading, and every pointer from the package's strings and
comments to the docs names a file and a section that are there."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

from tests.support.paths import REPO

DOCS = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "benchmarks" / "README.md",
    REPO / "benchmarks" / "PROFILE.md",
]
OURS = ("runeconsole", "tests", "benchmarks", "scripts")
SKIPPED_DIRS = {"__pycache__", "__snapshots__"}

# Files the docs name that are not ours, each as its text says whose it is.
OTHER_FILES = {
    "pipeline_runner.py": "claude-code-harness's pipeline runner (docs/protocols.md)",
    "cli.py": "the harness's `cli.py transition` (docs/console.md, docs/protocols.md)",
    "wait_for_signal.py": "the harness's runner waits with it (docs/protocols.md)",
    "api/tokens.py": "the reviewed file of a command-line example (docs/cli.md, protocols.md)",
    "a.py": "a file of the reader's project in a command-line example (docs/cli.md)",
    "src/formatter.py": "a file of the reader's project in a command-line example",
}
# Backticked CamelCase names that are not ours, by whose they are.
OTHER_NAMES = {
    name: whose
    for whose, names in {
        "Textual's (the widget, and what the profiles saw inside it)": (
            "DataTable ScrollView StylesCache TwoWayDict StringKey"
        ),
        "watchdog's (benchmarks/PROFILE.md's profile of the file watcher)": (
            "DelayedQueue SkipRepeatsQueue EventEmitter InotifyEmitter InotifyFD "
            "InotifyMoveEventGrouper FileCreatedEvent FileModifiedEvent FileMovedEvent "
            "FileDeletedEvent FileClosedEvent"
        ),
        "sortedcontainers' (a proposal in benchmarks/PROFILE.md)": "SortedList",
        "OpenSSH's options (docs/fleet.md, docs/protocols.md)": (
            "BatchMode ControlPath StrictHostKeyChecking"
        ),
        "Claude Code's tool (docs/protocols.md)": "TaskUpdate",
    }.items()
    for name in names.split()
}

_MODULE = re.compile(r"(?<![\w/.*{}<>$-])((?:[\w.-]+/)*[A-Za-z_][\w-]*\.py)(?![\w/])")
_CAMEL = re.compile(r"`([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?:\.\w+|\(\))?`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_DOC_POINTER = re.compile(r"\b((?:\.\./)*(?:docs/)?[\w-]+\.md)(#[\w-]+)?")
_VAGUE = re.compile(r"\bREADME\b(?!\.md)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _our_files(*folders: str) -> Iterator[Path]:
    for folder in folders:
        for path in (REPO / folder).rglob("*.py"):
            if not SKIPPED_DIRS.intersection(path.relative_to(REPO).parts):
                yield path


@cache
def module_paths() -> frozenset[str]:
    return frozenset(path.relative_to(REPO).as_posix() for path in _our_files(*OURS))


@cache
def class_names() -> frozenset[str]:
    """The classes of the package (the docs name no test's or benchmark's class)."""
    names: set[str] = set()
    for path in _our_files("runeconsole"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names.update(node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef))
    return frozenset(names)


def module_exists(name: str) -> bool:
    """``name`` (``a/b.py`` or ``b.py``) is the tail of a module path of the repository."""
    name = re.sub(r"^(\.\.?/)+", "", name)
    return name in OTHER_FILES or any(
        path == name or path.endswith("/" + name) for path in module_paths()
    )


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: links and markup read as their text, lowercase,
    punctuation dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def prose(text: str) -> Iterator[tuple[int, str, bool]]:
    """Each line, its number, and whether it lies in a fenced code block."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        yield number, line, fenced


@cache
def anchors(path: Path) -> frozenset[str]:
    found: list[str] = []
    for _, line, fenced in prose(path.read_text(encoding="utf-8")):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading and not fenced:
            base = slug(heading.group(1))
            seen = sum(1 for anchor in found if re.fullmatch(rf"{re.escape(base)}(-\d+)?", anchor))
            found.append(f"{base}-{seen}" if seen else base)
    return frozenset(found)


def stale_modules(text: str) -> list[str]:
    return [
        f"line {n}: {name}"
        for n, line, _ in prose(text)
        for name in _MODULE.findall(line)
        if "://" not in line[: line.find(name)].rsplit(" ", 1)[-1] and not module_exists(name)
    ]


def unknown_classes(text: str) -> list[str]:
    return [
        f"line {n}: {name}"
        for n, line, _ in prose(text)
        for name in _CAMEL.findall(line)
        if name not in class_names() and name not in OTHER_NAMES
    ]


def broken_link(target: str, where: Path) -> str | None:
    """Why a link from the file ``where`` to ``target`` finds nothing, or ``None``."""
    if re.match(r"[a-z][a-z+.-]*:", target):
        return None  # http:, https:, mailto:
    file, _, anchor = target.partition("#")
    path = (where.parent / file).resolve() if file else where
    if not path.exists():
        return f"{target}: no {file}"
    if anchor and path.suffix == ".md" and anchor not in anchors(path):
        return f"{target}: no heading #{anchor} in {path.relative_to(REPO)}"
    return None


def broken_links(text: str, where: Path) -> list[str]:
    return [
        f"line {n}: {why}"
        for n, line, fenced in prose(text)
        if not fenced
        for target in _LINK.findall(line)
        if (why := broken_link(target, where)) is not None
    ]


def package_texts(path: Path) -> Iterator[tuple[int, str]]:
    """The strings (adjacent literals joined) and comments of a module of the package."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def doc_pointers(text: str) -> list[str]:
    """What is wrong with the pointers to the docs in one string of the package: a
    README named without its file and section, or a file or section not there."""
    wrong = [
        f"{text[m.start() :][:60]!r}: name the file and its section" for m in _VAGUE.finditer(text)
    ]
    for file, anchor in _DOC_POINTER.findall(text):
        name = file.lstrip("./")
        if not name.startswith("docs/") and name != "README.md":
            continue  # another project's file, or a benchmark's
        why = broken_link(name + anchor, REPO / "README.md")
        if why is not None:
            wrong.append(why)
    return wrong


def in_each_doc(check: Callable[[str, Path], list[str]]) -> dict[str, list[str]]:
    """What ``check`` finds wrong in each doc, by doc (the docs it finds nothing in left out)."""
    return {
        str(doc.relative_to(REPO)): found
        for doc in DOCS
        if (found := check(doc.read_text(encoding="utf-8"), doc))
    }


def test_every_module_the_docs_name_is_a_file_of_the_repository() -> None:
    assert in_each_doc(lambda text, _: stale_modules(text)) == {}


def test_every_class_of_ours_the_docs_name_is_a_class_of_the_package() -> None:
    assert in_each_doc(lambda text, _: unknown_classes(text)) == {}


def test_every_link_to_a_section_finds_its_heading() -> None:
    assert in_each_doc(broken_links) == {}


def test_every_pointer_from_the_package_to_the_docs_names_a_file_and_section_there() -> None:
    wrong = []
    for path in sorted((REPO / "runeconsole").rglob("*.py")):
        if "demo" in path.relative_to(REPO).parts:
            continue  # the demo writes a made-up project's README.md and docs/*.md
        for line, text in package_texts(path):
            wrong += [f"{path.relative_to(REPO)}:{line}: {why}" for why in doc_pointers(text)]
    assert wrong == []


def test_a_stale_name_is_caught() -> None:
    """The checks see what they are for: modules, classes and sections that are gone."""
    text = (
        "The rows live in `tui/panes/one_line_rows.py` and `shared_cells.py`; the pane is a\n"
        "`LivePane`. See [the keys](README.md#the-keyz).\n"
    )
    assert [line.split(": ")[1] for line in stale_modules(text)] == [
        "tui/panes/one_line_rows.py",
        "shared_cells.py",
    ]
    assert unknown_classes(text) == ["line 2: LivePane"]
    assert broken_links(text, REPO / "README.md") == [
        "line 2: README.md#the-keyz: no heading #the-keyz in README.md"
    ]
    assert doc_pointers('see the README\'s "Worker questions"') != []
    assert doc_pointers("docs/protocols.md#worker-questions") == []
    assert doc_pointers("docs/protocols.md#no-such-section") != []
