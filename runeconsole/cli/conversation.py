"""``runeconsole conversation AGENT [--json] [--since WHEN] [--session ID]``: what an agent
said and did, its Claude Code session's turns in order.

One line a turn: when, who spoke, what kind, then the text's first line (a tool call as
``Bash: echo hi``, its result's first line after ``→``); a subagent's turns indented under
the call that started it. ``--json``: the turns (``Turn.to_json``). The transcript is the
one the agent's hooks recorded, else the newest of its working directory's (``--session``
picks another of its sessions).
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.control import printable
from runeconsole.core.errors import InvalidInput
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.conversations.locate import OperatorPrompts, transcript_for
from runeconsole.services.conversations.reading import read_conversation
from runeconsole.services.conversations.turns import TOOL, UNREADABLE, Turn

_AGE = re.compile(r"(\d+)\s*([smhdw])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
RESULT_CHARS = 80


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    show = subparsers.add_parser(
        "conversation",
        parents=[common],
        help="an agent's conversation: prompts, replies, tool calls, subagents",
        description="The turns of an agent's Claude Code session in order: the user's and "
        "the operator's prompts, the assistant's text, each tool call and its result, "
        "compactions and resumptions; a subagent's turns indented under its call.",
    )
    show.add_argument("agent", metavar="AGENT", help="{role}-{name}")
    show.add_argument("--json", action="store_true", help="the turns as JSON")
    show.add_argument(
        "--since", metavar="WHEN", help="only turns since: an age (90m, 6h, 2d) or a moment"
    )
    show.add_argument("--session", metavar="ID", help="this session of the agent's (a UUID)")
    show.set_defaults(func=show_conversation)


def since(value: str, now: datetime) -> datetime:
    """``90m``, ``6h``, ``2d``, ``1w`` before ``now``, or an ISO moment (UTC if no zone)."""
    text = value.strip().lower()
    if (age := _AGE.fullmatch(text)) is not None:
        return now - timedelta(seconds=int(age.group(1)) * _UNITS[age.group(2)])
    moment = parse_iso(value)
    if moment is None:
        raise InvalidInput(f"--since {value!r}: give an age (90m, 6h, 2d, 1w) or an ISO moment")
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def show_conversation(args: argparse.Namespace) -> int:
    project = open_project(args)
    path = transcript_for(project, args.agent, args.session)
    conversation = read_conversation(path, operator=OperatorPrompts.of(project, args.agent))
    turns = conversation.turns
    if args.since:
        start = since(args.since, project.clock.now())
        turns = [t for t in turns if t.at is None or t.at >= start]
    if args.json:
        print_json([t.to_json() for t in turns])
        return 0
    print(printable(f"── {args.agent}: session {conversation.session_id} ({path})"))
    for turn in turns:
        print(line_of(turn))
    if conversation.error:
        print(printable(f"── cannot read it: {conversation.error}"))
    elif conversation.skipped:
        print(f"── {conversation.skipped} line(s) could not be read (marked where they were)")
    return 0


def line_of(turn: Turn) -> str:
    """One turn on one line: time, speaker, kind, the text's first line (a call's result's
    first line after it), indented by its depth."""
    when = turn.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if turn.at else " " * 19
    text = _first_line(turn.text)
    if turn.kind == TOOL and (turn.result or turn.is_error):
        result = _first_line(turn.result)
        result = result if len(result) <= RESULT_CHARS else result[: RESULT_CHARS - 1] + "…"
        text += f"  → {'error: ' if turn.is_error else ''}{result}"
    if turn.note and turn.kind != UNREADABLE:
        text += f"  [{turn.note}]"
    indent = "    " * turn.depth
    return printable(f"{when}  {indent}{turn.speaker:<9} {turn.kind:<11} {text}")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""
