"""The review's lexer for a file is the one Pygments would take by the file's name, found
without loading Pygments' plugin lexers (an installed IPython is not imported)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pygments.lexers import get_all_lexers, get_lexer_for_filename
from pygments.util import ClassNotFound

from runeconsole.tui.review.lexers import lexer_for

NAMES = [
    "src/app.py", "Makefile", "lib/x.c", "x.h", "a.cpp", "b.hpp", "web/app.js", "t.ts",
    "t.tsx", "README.md", "data.json", "ci.yaml", "ci.yml", "pyproject.toml", "lib.rs",
    "main.go", "run.sh", "index.html", "site.css", "notes.txt", "setup.cfg", "Dockerfile",
    "CMakeLists.txt", "a.tar.gz", "README", "UPPER.PY", ".bashrc", "x.pyi", "q.sql",
]  # fmt: skip


def pygments_choice(name: str) -> type | None:
    try:
        return type(get_lexer_for_filename(name))
    except ClassNotFound:
        return None


def example_names() -> list[str]:
    """A file name for each built-in pattern (``*.py`` -> ``file.py``)."""
    names = []
    for _, _, patterns, _ in get_all_lexers(plugins=False):
        for pattern in patterns:
            names.append(pattern.replace("*", "file").replace("[ch]", "c").replace("?", "x"))
    return names


@pytest.mark.parametrize("name", NAMES)
def test_the_lexer_pygments_would_take(name: str) -> None:
    found = lexer_for(name)
    assert (type(found) if found is not None else None) is pygments_choice(name)


def test_every_built_in_pattern_agrees_with_pygments() -> None:
    differ = [
        name
        for name in example_names()
        if (type(lexer_for(name)) if lexer_for(name) else None) is not pygments_choice(name)
    ]
    assert differ == []


def test_options_keep_the_lines_as_they_are() -> None:
    lexer = lexer_for("a.py")
    assert lexer is not None
    assert (lexer.stripnl, lexer.ensurenl, lexer.stripall) == (False, False, False)


def test_no_plugin_lexer_is_loaded() -> None:
    code = (
        "import sys\n"
        "from runeconsole.tui.review.lexers import lexer_for\n"
        "lexer_for('a.py'); lexer_for('Makefile'); lexer_for('unknown.zzz')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'IPython'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
