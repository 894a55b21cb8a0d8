"""Entry point ``runeconsole``: no arguments opens the console; subcommands act.

Each command group lives in its own module with a ``register(subparsers, common)``
function, so adding a protocol means adding its commands to ``COMMANDS``.
Textual is imported only by the commands that open a screen, which keeps the
scripted commands fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from runeconsole import __version__
from runeconsole.cli import console
from runeconsole.cli.common import add_root_option
from runeconsole.core.config import tell_warnings_to
from runeconsole.core.errors import RuneError
from runeconsole.core.gc_passes import collector_paused

# command -> the module (in runeconsole.cli) that registers it. Only the module of the
# command being run is imported, so `status-line` in a tmux status bar stays quick.
COMMANDS = {
    "console": "console",
    "agents": "agents",
    "agent": "agents",
    "demo": "demo",
    "question": "questions",
    "status-line": "questions",
    "suspend": "suspended",
    "suspended": "suspended",
    "checkpoint": "checkpoints",
    "outputs": "outputs",
    "spawn": "supervise",
    "monitor": "supervise",
    "respawn": "supervise",
    "handoff": "supervise",
    "kill": "supervise",
    "hook": "hook_files",
    "merge-queue": "merge_queue",
    "claude": "claude",
    "events": "events",
    "permissions": "permissions",
    "review": "review",
    "prune": "retention",
    "interrupted": "journal",
    "cost": "cost",
    "budget": "cost",
    "background": "background",
    "say": "reply",
    "peek": "reply",
    "serve": "serve",
    "new": "dispatch",
    "task": "dispatch",
    "worktrees": "dispatch",
    "resume": "continuing",
    "fork": "continuing",
    "pipelines": "pipelines",
    "pipeline": "pipelines",
    "gate": "gates",
    "conversation": "conversation",
    "search": "search",
}


# The options of the bare ``runeconsole`` that take a value: the word after one is not a command.
VALUED = ("--root", "--fleet")


def command_modules(argv: Sequence[str] | None) -> list[ModuleType]:
    """The module of the command in ``argv``; none when it names no command and asks for no
    help (the console opens: it needs no other command's arguments); every module for
    ``--help``, a word that is no command (argparse lists them all) and ``argv`` None."""
    if argv is not None:
        words = iter(argv)
        for word in words:
            if word in VALUED:
                next(words, None)
            elif word in ("-h", "--help"):
                break
            elif not word.startswith("-"):
                if word in COMMANDS:
                    return [importlib.import_module(f"runeconsole.cli.{COMMANDS[word]}")]
                break
        else:
            return []
    names = dict.fromkeys(COMMANDS.values())
    return [importlib.import_module(f"runeconsole.cli.{name}") for name in names]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv`` (every command's, with ``None``)."""
    parser = argparse.ArgumentParser(
        prog="runeconsole",
        description="Operations console for a fleet of AI coding agents in tmux. "
        "With no command, opens the console on the project root.",
    )
    parser.add_argument("--version", action="version", version=f"runeconsole {__version__}")
    add_root_option(parser, default=None)
    console.add_console_options(parser)
    common = argparse.ArgumentParser(add_help=False)
    add_root_option(common, default=argparse.SUPPRESS)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in command_modules(argv):
        module.register(subparsers, common)
    parser.set_defaults(func=console.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    tell_warnings_to(_print_warning)
    with collector_paused():  # the command's modules: nothing they make is garbage
        parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RuneError as exc:
        print(f"runeconsole: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the machine said no (a file where a directory belongs, a full disk)
        where = f"{exc.filename}: " if exc.filename else ""
        why = exc.strerror or str(exc)
        if isinstance(exc, FileExistsError | NotADirectoryError):
            why = "a file stands where a directory belongs; move it aside"
        print(f"runeconsole: {where}{why}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: say so plainly, traceback only on request
        if os.environ.get("RUNECONSOLE_DEBUG"):
            traceback.print_exc()
        print(
            f"runeconsole: internal error: {type(exc).__name__}: {exc} "
            "(set RUNECONSOLE_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def _print_warning(warning: str) -> None:
    print(f"runeconsole: warning: {warning}", file=sys.stderr)
