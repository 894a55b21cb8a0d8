"""The console reaches Textual through its public API only, so that a minor release of
Textual (pyproject pins the minor version the tests pass on) cannot break it unseen: no
private module of Textual is imported, no class deriving from one of Textual's uses (reads,
writes or overrides) a private name its Textual bases define, no private name that only
Textual defines is read off any other object, and no private part is reached by a name in
a string (``getattr(textual.widget, "StylesCache")``, ``query("ToastHolder")``).

The one exception is ``tui/support/textual_workarounds.py``: each workaround of a Textual
bug lives there, and names the Textual issue it waits on."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator, Mapping
from contextlib import suppress
from functools import cache
from pathlib import Path

import textual
from textual.widgets import DataTable

import runeconsole
from runeconsole.tui.support import textual_workarounds
from tests.support.paths import REPO

PACKAGE = REPO / "runeconsole"
WORKAROUNDS = Path(textual_workarounds.__file__)  # private parts of Textual allowed here
REACHING = frozenset({"getattr", "hasattr", "setattr", "delattr"})
QUERIES = frozenset({"query", "query_one", "query_exactly_one", "query_children"})


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def defined_names(tree: ast.AST) -> set[str]:
    """Private names a source defines: methods, class attributes, ``self._x = …``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and private(node.name):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else []
                if isinstance(item, ast.AnnAssign):
                    targets = [item.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name) and private(t.id)}
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and private(node.attr)
        ):
            names.add(node.attr)
    return names


@cache
def textual_trees() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of Textual, parsed (once), by its path from ``textual/``'s parent."""
    root = Path(textual.__file__).parent
    return tuple(
        (path.relative_to(root.parent), ast.parse(path.read_text()))
        for path in sorted(root.rglob("*.py"))
    )


@cache
def textual_private_names() -> frozenset[str]:
    return frozenset().union(*(defined_names(tree) for _, tree in textual_trees()))


@cache
def private_names_of(cls: type) -> frozenset[str]:
    """Private names a Textual class defines (its own source and ``vars``)."""
    names = {name for name in vars(cls) if private(name)}
    with suppress(OSError, TypeError):  # no source: a class made at run time
        names |= defined_names(ast.parse(inspect.getsource(cls)))
    return frozenset(names)


def used_names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            yield node.lineno, node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and private(node.name):
            yield node.lineno, node.name


def private_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [
                f"{node.module}.{alias.name}" for alias in node.names if private(alias.name)
            ]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] == "textual" and any(part.startswith("_") for part in parts[1:]):
                yield node.lineno, module


def foreign_reads(tree: ast.AST, ours: set[str]) -> Iterator[tuple[int, str]]:
    """``x._name`` where only Textual defines ``_name`` and ``x`` is neither ``self``/``cls``
    nor another library's module (``os._exit``)."""
    theirs = textual_private_names() - ours
    modules = {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if not alias.name.startswith("textual")
    }
    exempt = {"self", "cls", *modules}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in theirs
            and not (isinstance(node.value, ast.Name) and node.value.id in exempt)
        ):
            yield node.lineno, node.attr


@cache
def internal_classes() -> frozenset[str]:
    """Textual's classes that are no part of its API: defined in a private module only and
    exported by no public one (``ToastHolder``, ``StylesCache``; not ``Static``)."""
    hidden: set[str] = set()
    public: set[str] = set()
    for path, tree in textual_trees():
        parts = path.with_suffix("").parts
        classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        if any(private(part) for part in parts):
            hidden |= classes
            continue
        public |= classes
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                with suppress(ValueError):
                    public |= set(ast.literal_eval(node.value))
    return frozenset(hidden - public)


def named_in_strings(tree: ast.AST, ours: set[str]) -> Iterator[tuple[int, str]]:
    """A private part of Textual reached by a name in a string: ``getattr`` (and kin) on a
    module of Textual or for a private or internal name, a query for an internal class."""
    theirs = (internal_classes() | textual_private_names()) - ours
    textual_names = set()  # what the module calls Textual's modules and names it imports
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                module = node.module or "" if isinstance(node, ast.ImportFrom) else alias.name
                if module.split(".")[0] == "textual":
                    textual_names.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
        names = {word for text in texts if isinstance(text, str) for word in text.split()}
        if isinstance(node.func, ast.Name) and node.func.id in REACHING:
            root = node.args[0]
            while isinstance(root, ast.Attribute):
                root = root.value
            on_textual = isinstance(root, ast.Name) and root.id in textual_names
            for name in names:
                if on_textual or name in theirs:
                    yield node.lineno, f"{node.func.id}(…, {name!r})"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in QUERIES:
            for name in names & internal_classes() - ours:
                yield node.lineno, f"{node.func.attr}({name!r})"


def ours_defined(trees: Mapping[Path, ast.AST]) -> set[str]:
    """Private names and class names the package defines itself."""
    names = set().union(*(defined_names(tree) for tree in trees.values()))
    return names | {
        node.name
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }


def textual_bases(cls: type) -> list[type]:
    return [base for base in cls.__mro__ if base.__module__.split(".")[0] == "textual"]


def leaning_on(bases: list[type], tree: ast.AST) -> list[str]:
    """Private names of ``bases`` (Textual classes) that a class's source uses."""
    theirs = frozenset().union(*(private_names_of(base) for base in bases))
    return sorted({name for _, name in used_names(tree) if name in theirs})


def modules() -> Iterator[str]:
    yield runeconsole.__name__
    for found in pkgutil.walk_packages(runeconsole.__path__, "runeconsole."):
        if not found.name.endswith(".__main__"):  # importing it runs the command line
            yield found.name


def test_no_private_module_or_name_of_textual_is_used_outside_its_workarounds() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    trees = {path: ast.parse(path.read_text()) for path in files}
    ours = ours_defined(trees)
    found = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path, tree in trees.items()
        if path != WORKAROUNDS
        for line, name in (
            *private_imports(tree),
            *foreign_reads(tree, ours),
            *named_in_strings(tree, ours),
        )
    ]
    for module_name in modules():
        if module_name == textual_workarounds.__name__:
            continue
        module = importlib.import_module(module_name)
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == module_name and textual_bases(cls):
                tree = ast.parse(inspect.getsource(cls))
                found += [
                    f"{module_name}.{cls.__name__}: {name}"
                    for name in leaning_on(textual_bases(cls), tree)
                ]
    assert not found, "private parts of Textual used:\n" + "\n".join(found)


SAMPLE = """
from textual._two_way_dict import TwoWayDict
from textual.widgets import DataTable


class Table(DataTable):
    def _render_cell(self, *args):
        return self._row_locations


def peek(table):
    return table._data


def memo():
    return getattr(textual.widget, "StylesCache", None)


def holders(screen):
    return screen.query("ToastHolder")
"""


def test_the_check_finds_each_kind_of_use() -> None:
    """The check above can fail: a private module, a subclass leaning on its base's private
    names, and a private name read off another object are each found."""
    tree = ast.parse("import textual.widget\n" + SAMPLE)
    assert [module for _, module in private_imports(tree)] == ["textual._two_way_dict"]
    assert [name for _, name in foreign_reads(tree, set())] == ["_data"]
    table = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    assert leaning_on(textual_bases(DataTable), table) == ["_render_cell", "_row_locations"]
    assert [text for _, text in named_in_strings(tree, set())] == [
        "getattr(…, 'StylesCache')",
        "query('ToastHolder')",
    ]


def test_each_workaround_names_the_textual_issue_it_waits_on() -> None:
    """Every function of the workarounds module is one, listed with where Textual tracks
    it (an issue; a line of Textual's code while none is filed)."""
    functions = {
        name
        for name, value in vars(textual_workarounds).items()
        if inspect.isfunction(value)
        and value.__module__ == textual_workarounds.__name__
        and not private(name)
    }
    assert functions == set(textual_workarounds.WAITS_ON)
    for name, where in textual_workarounds.WAITS_ON.items():
        assert where.startswith("https://github.com/Textualize/textual/"), name
