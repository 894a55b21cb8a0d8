"""``runeconsole background list|logs|attach|stop``: Claude Code's background sessions
(``claude --bg``) as agents. ``runeconsole spawn --background`` starts one
(``cli/supervise.py``).

``list`` asks Claude Code (``claude agents --json --all``) and brings the agents in line
with it (a session no hook told of is registered, a stopped one terminated); ``logs``
prints the session's screen as ``claude logs`` replays it (``--raw``: its escapes as
written); ``attach`` runs ``claude attach`` in this terminal, or in a new window of
your tmux (``--window``, the console's ``g``); ``stop`` is ``runeconsole kill`` for it.
"""

from __future__ import annotations

import argparse
import os
import sys

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.services.claude.background.sessions import Background, SyncReport
from runeconsole.services.supervision.service import Supervisor


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = subparsers.add_parser(
        "background", help="Claude Code's background sessions (claude --bg) as agents"
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", parents=[common], help="this project's background sessions, agents kept in line"
    )
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=list_sessions)
    logs = actions.add_parser(
        "logs", parents=[common], help="the session's screen now (claude logs, replayed)"
    )
    logs.add_argument("key", metavar="KEY", help="the agent ({role}-{name})")
    logs.add_argument("--raw", action="store_true", help="claude logs' output, escapes and all")
    logs.add_argument("--json", action="store_true", help="{key, id, screen}")
    logs.set_defaults(func=show_logs)
    attach = actions.add_parser(
        "attach", parents=[common], help="open the session in this terminal (claude attach)"
    )
    attach.add_argument("key", metavar="KEY")
    attach.add_argument(
        "--window", action="store_true", help="in a new window of your tmux instead"
    )
    attach.set_defaults(func=attach_session)
    stop = actions.add_parser(
        "stop", parents=[common], help="stop the session (claude stop; its conversation is kept)"
    )
    stop.add_argument("key", metavar="KEY")
    stop.add_argument("--json", action="store_true")
    stop.set_defaults(func=stop_session)


def list_sessions(args: argparse.Namespace) -> int:
    report = Background(open_project(args)).sync()
    if args.json:
        print_json(report.to_json())
        return 0
    _print(report)
    return 0


def _print(report: SyncReport) -> None:
    if not report.sessions:
        print("no Claude Code background sessions in this project")
    else:
        rows = [
            (
                s.id,
                report.keys.get(s.id, ""),
                s.name or "",
                s.state or "",
                str(s.pid or ""),
                "running" if s.running else "ended",
            )
            for s in report.sessions
        ]
        tints = ["green" if s.running else "grey" for s in report.sessions]
        print_table(("ID", "AGENT", "NAME", "STATE", "PID", ""), rows, tints)
    for key in report.registered:
        print(f"registered {key}")
    for key in report.ended:
        print(f"{key}: terminated (its background session ended)")


def show_logs(args: argparse.Namespace) -> int:
    background = Background(open_project(args))
    if args.raw:
        sys.stdout.write(background.logs(args.key))
        return 0
    screen = background.peek_text(args.key)
    if args.json:
        print_json({"key": args.key, "id": background.short_id(args.key)[1], "screen": screen})
    else:
        print(screen)
    return 0


def attach_session(args: argparse.Namespace) -> int:
    project = open_project(args)
    if args.window:
        Supervisor(project).switch_to(args.key)
        return 0
    argv = Background(project).attach_argv(args.key)
    sys.stdout.flush()
    os.execv(argv[0], argv)
    return 0  # not reached


def stop_session(args: argparse.Namespace) -> int:
    record = Background(open_project(args)).stop(args.key)
    if args.json:
        print_json(record.to_json())
    else:
        print(f"{record.key}: stopped ({record.status})")
    return 0
