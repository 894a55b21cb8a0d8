"""``runeconsole`` with no command: open the console."""

from __future__ import annotations

import argparse

from runeconsole.cli.common import resolve_root


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    sub = subparsers.add_parser("console", parents=[common], help="open the console (default)")
    sub.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = resolve_root(args)
    from runeconsole.tui.app import create_app

    create_app(root).run()
    return 0
