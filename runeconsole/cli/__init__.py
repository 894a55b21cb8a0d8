"""Entry point ``runeconsole``: no arguments opens the console; subcommands act.

Each command group lives in its own module with a ``register(subparsers, common)``
function, so adding a protocol means adding a module to ``COMMAND_MODULES``.
Textual is imported only by the commands that open a screen, which keeps the
scripted commands fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from runeconsole import __version__
from runeconsole.cli import (
    agents,
    checkpoints,
    console,
    demo,
    hooks,
    outputs,
    supervise,
    suspended,
)
from runeconsole.cli import merge_queue as merge_queue_cli
from runeconsole.cli import questions as question_commands
from runeconsole.cli.common import add_root_option
from runeconsole.core.errors import RuneError

COMMAND_MODULES = (
    console,
    agents,
    demo,
    question_commands,
    suspended,
    checkpoints,
    outputs,
    supervise,
    hooks,
    merge_queue_cli,
)


def build_parser() -> argparse.ArgumentParser:
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
    for module in COMMAND_MODULES:
        module.register(subparsers, common)
    parser.set_defaults(func=console.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
    except Exception as exc:  # a bug: say so plainly, traceback only on request
        if os.environ.get("RUNECONSOLE_DEBUG"):
            traceback.print_exc()
        print(
            f"runeconsole: internal error: {type(exc).__name__}: {exc} "
            "(set RUNECONSOLE_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1
