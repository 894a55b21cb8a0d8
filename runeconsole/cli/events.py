"""``runeconsole events [--follow] [--json]``: the project's state, then its changes."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Any

from runeconsole.cli.common import (
    add_fleet_option,
    fleet_sources,
    open_project,
    warn_problems,
)
from runeconsole.core.control import printable
from runeconsole.services.claude.presence import ConsolePresence
from runeconsole.services.events import Event, EventStream, follow


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    events = subparsers.add_parser(
        "events",
        parents=[common],
        help="the state (agents, questions, suspended tasks, merge queue, monitor readings) "
        "as events; with --follow, every change after it",
    )
    events.add_argument("--follow", "-f", action="store_true", help="keep writing changes")
    events.add_argument("--json", action="store_true", help="one JSON object per line")
    events.add_argument(
        "--present",
        action="store_true",
        help="with --follow: stand for an open console while following, so Claude Code's "
        "hooks bring AskUserQuestion calls and permission requests here to be answered "
        "(`question answer`, `permissions decide`); the fleet console follows its sources so",
    )
    events.add_argument(
        "--heartbeat",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="write a heartbeat line after this long without one (default 5)",
    )
    events.add_argument(
        "--rescan",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="read everything again this often, for changes watching missed (default 5)",
    )
    add_fleet_option(
        events,
        "every source of a fleet file (local roots and hosts over ssh), merged; "
        "keys become SOURCE/KEY when there is more than one",
    )
    events.set_defaults(func=run_events)


def run_events(args: argparse.Namespace) -> int:
    if args.fleet:
        return run_fleet(args)
    project = open_project(args, strict=False)  # a typo in the talisman must not stop a feed
    warn_problems(project)
    stream = EventStream(project)
    write = _json_lines if args.json else _text_lines
    if not args.follow:
        _guarded(write, stream.snapshot())
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        follow(
            stream,
            lambda events: write(events),
            stop=stop,
            heartbeat=max(0.1, args.heartbeat),
            rescan=max(0.2, args.rescan),
            presence=ConsolePresence(project.paths) if args.present else None,
        )
    except BrokenPipeError:
        _quiet_stdout()
    return 0


def run_fleet(args: argparse.Namespace) -> int:
    from runeconsole.services.sources.fleet import FleetFeed

    feed = FleetFeed(
        fleet_sources(args.fleet),
        heartbeat=max(0.1, args.heartbeat),
        present=args.present and args.follow,
    )
    write = _json_lines if args.json else _text_lines
    signal.signal(signal.SIGTERM, lambda *_: feed.stop())
    try:
        feed.run(write, follow_changes=args.follow)
    except BrokenPipeError:
        _quiet_stdout()
    return 0


def _guarded(write: Any, events: list[Event]) -> None:
    try:
        write(events)
    except BrokenPipeError:
        _quiet_stdout()


def _json_lines(events: list[Event]) -> None:
    text = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events)
    sys.stdout.write(text)
    sys.stdout.flush()


def _text_lines(events: list[Event]) -> None:
    lines = []
    for event in events:
        kind, key = event.get("kind", ""), event.get("key", "")
        extra = event.get("root") or event.get("at") or ""
        lines.append(printable(" ".join(str(w) for w in (event["event"], kind, key, extra) if w)))
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def _quiet_stdout() -> None:
    """The reader has gone: point stdout at /dev/null so closing it at exit says nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
