"""Which Pygments lexer highlights a file: Pygments' own choice by the file's name, among
its built-in lexers.

``pygments.lexers.get_lexer_for_filename`` also loads every installed plugin lexer on its
first call (the ``pygments.lexers`` entry points: with IPython installed, IPython itself,
most of a second of the first review's opening, every other thread held up meanwhile).
Here the built-in table is read without importing a lexer, the names matched by suffix,
and only the matching lexers' modules are loaded; among several, the one Pygments would
take (its priority, a name without ``*`` first, then the class name)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import cache, lru_cache
from pathlib import PurePosixPath

from pygments.lexer import Lexer
from pygments.lexers import find_lexer_class, get_all_lexers
from pygments.util import ClassNotFound

WILD = frozenset("*?[")


@cache
def _patterns() -> tuple[dict[str, list[tuple[str, str]]], list[tuple[str, str]]]:
    """The built-in lexers' file-name patterns: those of the form ``*.SUFFIX`` by their
    suffix (``.py``: most of them), and the others (``Makefile``, ``*.[ch]``)."""
    by_suffix: dict[str, list[tuple[str, str]]] = {}
    others: list[tuple[str, str]] = []
    for name, _, patterns, _ in get_all_lexers(plugins=False):
        for pattern in patterns:
            suffix = pattern[1:]
            if pattern.startswith("*.") and not WILD.intersection(suffix):
                by_suffix.setdefault(suffix, []).append((name, pattern))
            else:
                others.append((name, pattern))
    return by_suffix, others


def matching(file_name: str) -> list[tuple[str, str]]:
    """The built-in lexers whose patterns match ``file_name`` (a name, no directory), as
    ``(lexer name, pattern)``, matched as Pygments does (case counts)."""
    by_suffix, others = _patterns()
    found: list[tuple[str, str]] = []
    dot = file_name.find(".")
    while dot >= 0:
        found += by_suffix.get(file_name[dot:], [])
        dot = file_name.find(".", dot + 1)
    return found + [(name, p) for name, p in others if fnmatchcase(file_name, p)]


@lru_cache(maxsize=256)
def lexer_for(path: str) -> Lexer | None:
    """A lexer for the file at ``path`` (None: none fits, drawn plain)."""
    rated = []
    for name, pattern in matching(PurePosixPath(path).name):
        try:
            found = find_lexer_class(name)
        except ClassNotFound:
            continue
        if found is not None:
            bonus = 0.5 if "*" not in pattern else 0
            rated.append((found.priority + bonus, found.__name__, found))
    if not rated:
        return None
    chosen = max(rated, key=lambda item: item[:2])[2]
    return chosen(stripnl=False, ensurenl=False, stripall=False)
