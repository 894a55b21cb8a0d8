"""``runeconsole search QUERY [--agent A] [--role R] [--since D] [--tool T] [--speaker S]
[--limit N] [--json] [--rescan]`` and ``runeconsole search --rebuild``: one search over
every agent's conversation (the index in ``.claude/state/conversations.sqlite``).

Results newest first, one a hit: when, agent, who spoke (and the tool), then the snippet
with the words found marked: bold on a terminal, ``[`` ``]`` otherwise. The index is fed
by the console as agents work; ``--rescan`` first reads what changed since (and the first
search of a root builds it).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.control import printable
from runeconsole.core.errors import InvalidInput
from runeconsole.services.conversations.index import ConversationIndex, RescanReport
from runeconsole.services.conversations.query import Hit, parse_since
from runeconsole.services.conversations.turns import SPEAKERS

BOLD, PLAIN = "\033[1m", "\033[0m"


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    search = subparsers.add_parser(
        "search",
        parents=[common],
        help='search every agent\'s conversation: words, "phrases", prefixes*',
        description="Search what every agent said and did (prompts, the assistant's text, "
        'tool calls and their output): words (all must appear), "a phrase", a prefix*, '
        "a OR b, -not. Newest first.",
    )
    search.add_argument("query", nargs="?", metavar="QUERY")
    search.add_argument(
        "--query", dest="query_option", metavar="QUERY", help="the query (one beginning with -)"
    )
    search.add_argument("--agent", metavar="KEY", help="only this agent's conversations")
    search.add_argument("--role", help="only agents of this role")
    search.add_argument("--since", metavar="WHEN", help="an age (90m, 6h, 2d, 1w) or a moment")
    search.add_argument("--tool", help="only calls of this tool (Bash, Edit, …)")
    search.add_argument("--speaker", choices=SPEAKERS, help="only what this one said")
    search.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    search.add_argument("--json", action="store_true", help="the hits as JSON")
    search.add_argument("--rescan", action="store_true", help="read what changed first")
    search.add_argument(
        "--rebuild", action="store_true", help="drop the index and read every transcript again"
    )
    search.set_defaults(func=run_search)


def run_search(args: argparse.Namespace) -> int:
    project = open_project(args)
    if args.query_option is not None:
        if args.query is not None:
            raise InvalidInput("give the query once: QUERY or --query=QUERY")
        args.query = args.query_option
    if args.query is None and not (args.rebuild or args.rescan):
        raise InvalidInput("search what? `runeconsole search QUERY` (or --rebuild, --rescan)")
    since = parse_since(args.since, project.clock.now()) if args.since else None
    index = ConversationIndex(project)
    try:
        report = None
        if args.rebuild:
            report = index.rebuild()
        elif args.rescan:
            report = index.rescan()
        else:
            report = index.built()
        if report is not None:
            _tell(report, quiet=args.json and args.query is not None)
        for message in index.messages:
            print(f"runeconsole: {message}", file=sys.stderr)
        if args.query is None:
            if args.json:
                print_json(report.to_json() if report else {})
            return 0
        hits = index.search(
            args.query,
            agent=args.agent,
            role=args.role,
            since=since,
            tool=args.tool,
            speaker=args.speaker,
            limit=args.limit,
        )
    finally:
        index.close()
    if args.json:
        print_json([hit.to_json() for hit in hits])
        return 0
    if not hits:
        print(f"nothing found for {args.query!r}", file=sys.stderr)
        return 1
    bold = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    for hit in hits:
        print(line_of(hit, bold=bold))
    return 0


def _tell(report: RescanReport, *, quiet: bool) -> None:
    for message in report.messages:
        print(f"runeconsole: {message}", file=sys.stderr)
    if not quiet:
        print(f"indexed: {report.summary()}", file=sys.stderr)


def line_of(hit: Hit, *, bold: bool = False) -> str:
    """``2026-11-29 05:25  worker-a  assistant Bash  … [migration] notes …``"""
    when = hit.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if hit.at else "-".ljust(16)
    who = hit.speaker + (f" {hit.tool}" if hit.tool else "")
    if hit.depth:
        who = "subagent " + who
    pieces = [(printable(text), found) for text, found in hit.spans()]
    if bold:
        snippet = "".join(f"{BOLD}{t}{PLAIN}" if found else t for t, found in pieces)
    else:
        snippet = "".join(f"[{t}]" if found else t for t, found in pieces)
    agent = printable(hit.key or "-")
    return f"{when}  {agent:<20}  {who:<16}  {snippet}"
