"""Helpers shared by the command modules: the project a command works on, and output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runeconsole.adapters import git
from runeconsole.core.control import printable
from runeconsole.core.errors import InvalidInput
from runeconsole.services.project import Project

if TYPE_CHECKING:
    from runeconsole.core.fleet_file import SourceSpec

COLOURS = {"green": "32", "yellow": "33", "red": "31", "grey": "2"}


def add_root_option(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        default=default,
        help="project root (default: the git root of the working directory)",
    )


DEFAULT_FLEET = "default"  # ``--fleet`` with no file: ~/.config/runeconsole/fleet.yml


def add_fleet_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument(
        "--fleet",
        nargs="?",
        const=DEFAULT_FLEET,
        metavar="FILE",
        help=f"{help} (no FILE: $XDG_CONFIG_HOME/runeconsole/fleet.yml, else ~/.config/…)",
    )


def fleet_sources(value: str) -> list[SourceSpec]:
    """The sources of the fleet file ``--fleet`` names; ``InvalidInput`` if it is wrong."""
    from runeconsole.core.fleet_file import default_fleet_path, load_fleet

    path = default_fleet_path() if value == DEFAULT_FLEET else Path(value).expanduser()
    return load_fleet(path)


def resolve_root(args: argparse.Namespace) -> Path:
    given = getattr(args, "root", None)
    if given:
        root = Path(given).expanduser()
        if not root.is_dir():
            raise InvalidInput(f"--root {given}: no such directory")
        return root.resolve()
    spawned_in = os.environ.get("RUNECONSOLE_ROOT")  # set for agents started by `spawn`
    if spawned_in and Path(spawned_in).is_dir():
        return Path(spawned_in).resolve()
    found = git.toplevel(Path.cwd())
    if found is None:
        raise InvalidInput("not inside a git repository: run from your project, or pass --root DIR")
    return found


def open_project(args: argparse.Namespace, *, strict: bool = True) -> Project:
    """The project the command works on: the one place a command builds it.

    ``strict``: a bad setting in the talisman refuses the command (with the file, key and
    what is allowed). Lenient commands (heartbeats, the tmux status line) must go on with
    the defaults; they say each problem on stderr as a warning.
    """
    return Project(resolve_root(args), strict=strict)


def warn_problems(project: Project) -> None:
    """A lenient project's talisman problems, on stderr (the defaults were used)."""
    for problem in project.talisman.problems:
        print(f"runeconsole: warning: {problem}; using the default", file=sys.stderr)


def print_json(obj: Any) -> None:
    """Pretty JSON; a list is written one compact object per line (fast at 10,000 rows)."""
    if isinstance(obj, list):
        # One encoder for every item: ``json.dumps(ensure_ascii=False)`` builds one per call.
        lines = ",\n".join(map(json.JSONEncoder(ensure_ascii=False).encode, obj))
        sys.stdout.write(f"[\n{lines}\n]\n" if obj else "[]\n")
        return
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False))
    sys.stdout.write("\n")


def colour(text: str, name: str) -> str:
    if not sys.stdout.isatty() or os.environ.get("NO_COLOR"):
        return text
    return f"\033[{COLOURS.get(name, '0')}m{text}\033[0m"


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], tints: Sequence[str]
) -> None:
    """A plain aligned table; ``tints`` colours each row's first cell."""
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    for row, tint in zip(rows, tints, strict=True):
        cells = [cell.ljust(w) for cell, w in zip(row, widths, strict=True)]
        cells[0] = colour(cells[0], tint)
        print("  ".join(cells).rstrip())


def warn_archive(retention: Any) -> None:
    """What of the archive could not be read (``Retention.archive.errors``), on stderr."""
    for error in retention.archive.errors:
        print(f"runeconsole: warning: {error}", file=sys.stderr)
