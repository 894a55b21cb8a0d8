"""The console reaches Textual through its public API only, so that a minor release of
Textual (pyproject pins the minor version the tests pass on) cannot break it unseen: no
private module of Textual is imported, no class deriving from one of Textual's uses (reads,
writes or overrides) a private name its Textual bases define, and no private name that only
Textual defines is read off any other object."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from contextlib import suppress
from functools import cache
from pathlib import Path

import pytest
import textual
from textual.widgets import DataTable

import runeconsole
from tests.support.paths import REPO

PACKAGE = REPO / "runeconsole"


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
def textual_private_names() -> frozenset[str]:
    names: set[str] = set()
    for path in Path(textual.__file__).parent.rglob("*.py"):
        names |= defined_names(ast.parse(path.read_text()))
    return frozenset(names)


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


@pytest.mark.e2e
def test_no_private_module_or_name_of_textual_is_used_anywhere_in_the_package() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    trees = {path: ast.parse(path.read_text()) for path in files}
    ours = set().union(*(defined_names(tree) for tree in trees.values()))
    found = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path, tree in trees.items()
        for line, name in (*private_imports(tree), *foreign_reads(tree, ours))
    ]
    for module_name in modules():
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
"""


def test_the_check_finds_each_kind_of_use() -> None:
    """The check above can fail: a private module, a subclass leaning on its base's private
    names, and a private name read off another object are each found."""
    tree = ast.parse(SAMPLE)
    assert [module for _, module in private_imports(tree)] == ["textual._two_way_dict"]
    assert [name for _, name in foreign_reads(tree, set())] == ["_data"]
    table = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    assert leaning_on(textual_bases(DataTable), table) == ["_render_cell", "_row_locations"]
