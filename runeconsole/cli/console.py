"""``runeconsole`` with no command: open the console."""

from __future__ import annotations

import argparse

from runeconsole.cli.common import resolve_root


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    sub = subparsers.add_parser("console", parents=[common], help="open the console (default)")
    add_console_options(sub)
    sub.set_defaults(func=run)


def add_console_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-monitor",
        action="store_true",
        help="only watch the files: do not run the tmux monitor inside the console",
    )


def run(args: argparse.Namespace) -> int:
    root = resolve_root(args)
    from runeconsole.tui.app import create_app

    create_app(root, monitor=not getattr(args, "no_monitor", False)).run()
    return 0
