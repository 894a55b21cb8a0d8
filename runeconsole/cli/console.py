"""``runeconsole`` with no command: open the console."""

from __future__ import annotations

import argparse

from runeconsole.cli.common import add_fleet_option, fleet_sources, resolve_root
from runeconsole.core.gc_passes import collector_paused, freeze_alive


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    sub = subparsers.add_parser("console", parents=[common], help="open the console (default)")
    add_console_options(sub)
    sub.set_defaults(func=run)


def add_console_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-monitor",
        action="store_true",
        help="only watch the files: do not run the tmux monitor inside the console",
    )
    add_fleet_option(
        parser, "one console over every source of a fleet file (local roots, hosts over ssh)"
    )


# The console's modules (about 800) are imported with the cyclic collector paused and then
# left out of its passes, before it runs again: everything an import makes lives as long as
# the process, and the passes that walked it as it grew cost 50-70 ms of the cold start
# (frozen after the collector is back, the first young pass still walked all of it: 40 ms).


def run(args: argparse.Namespace) -> int:
    if getattr(args, "fleet", None):
        return run_fleet(args.fleet)
    root = resolve_root(args)
    with collector_paused():
        from runeconsole.tui.console.app import create_app

        freeze_alive()
    create_app(root, monitor=not getattr(args, "no_monitor", False)).run()
    return 0


def run_fleet(fleet: str) -> int:
    specs = fleet_sources(fleet)  # a bad file is refused before any screen
    with collector_paused():
        from runeconsole.tui.fleet_console.app import create_fleet_app

        freeze_alive()
    create_fleet_app(specs).run()
    return 0
