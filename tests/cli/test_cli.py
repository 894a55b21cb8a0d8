"""The entry point: every command is reachable, and only its own module is loaded."""

from __future__ import annotations

import argparse
import subprocess
import sys

from runeconsole.cli import COMMANDS, build_parser, console
from tests.support.cli import cli_env


def registered_commands(parser: argparse.ArgumentParser) -> set[str]:
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(subparsers.choices)


def test_every_registered_command_is_in_the_dispatch_table() -> None:
    assert registered_commands(build_parser()) == set(COMMANDS)
    assert registered_commands(build_parser(["--root", "x", "--help"])) == set(COMMANDS)
    assert registered_commands(build_parser(["no-such-command"])) == set(COMMANDS)


def test_a_command_loads_only_its_own_module() -> None:
    chosen = build_parser(["--root", "x", "status-line"])
    assert registered_commands(chosen) == {"question", "status-line"}


def test_the_console_loads_no_command_module() -> None:
    for argv in ([], ["--root", "x"], ["--root", "x", "--no-monitor"], ["--fleet", "f.yml"]):
        parser = build_parser(argv)
        assert registered_commands(parser) == set(), argv
        assert parser.parse_args(argv).func is console.run


def test_status_line_does_not_load_textual_or_tmux(tmp_path) -> None:
    probe = (
        "import sys; from runeconsole.cli import main; main(['--root', sys.argv[1], "
        "'status-line']); print(sorted(m for m in ('textual', 'libtmux') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        env=cli_env(),
        check=True,
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_console_starts_without_what_it_uses_later() -> None:
    """libtmux (the monitor runs tmux by its command line), pyte (a background session's
    screen), PyYAML (a frontmatter header out of the plain layout), Rich's Markdown (a
    conversation) and the demo load where they are used, not as the console starts
    (benchmarks/cold_start.py)."""
    later = ("libtmux", "pyte", "yaml", "rich.markdown", "markdown_it", "runeconsole.demo")
    probe = (
        "import sys; from runeconsole.cli import build_parser; build_parser(['--root', 'x']); "
        f"import runeconsole.tui.console.app; print(sorted(set({later!r}) & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env(),
        check=True,
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"
