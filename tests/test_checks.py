"""The checks beside the tests, run as tests so that ``pytest`` alone is the whole verdict:
the code is formatted (``ruff format --check``), the linter finds nothing (``ruff
check``), the type checker finds nothing in the package (mypy, strict, as
``[tool.mypy]`` in pyproject.toml sets it), and every ``type: ignore`` left says why.
(The import contracts are ``test_layers.py``'s.)"""

from __future__ import annotations

import re
import subprocess
import sys

from mypy import api as mypy

from tests.support.paths import REPO

CHECKED = ["runeconsole", "tests", "benchmarks", "scripts"]
IGNORE = re.compile(r"#\s*type:\s*ignore(\[[^\]]*\])?(?P<after>.*)$")


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *CHECKED],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_code_is_formatted() -> None:
    done = ruff("format", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_linter_finds_nothing() -> None:
    done = ruff("check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_type_checker_finds_nothing_in_the_package() -> None:
    report, errors, status = mypy.run(["--config-file", str(REPO / "pyproject.toml")])
    assert status == 0, report + errors


def test_every_type_ignore_in_the_package_says_why() -> None:
    bare = []
    for path in sorted((REPO / "runeconsole").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            found = IGNORE.search(line)
            if found and not found.group("after").strip().startswith("#"):
                bare.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not bare, "a type: ignore needs a comment after it saying why:\n" + "\n".join(bare)
