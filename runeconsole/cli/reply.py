"""``runeconsole say AGENT TEXT`` and ``runeconsole peek AGENT [--lines N]``: reply to an
agent and look at it without attaching to its pane.

``say`` pastes the text into the agent's tmux pane as one bracketed paste and submits it;
it refuses (exit 1, the reason on stderr, nothing typed) when no pane is known, the agent
has ended, it waits on a permission or a question, or the pane is not the agent's. TEXT
is the remaining words joined by spaces, ``-`` for standard input (several lines), or
``--text TEXT`` as one argument (what the fleet console sends over SSH).
``peek`` prints the agent's screen and its last assistant message.
"""

from __future__ import annotations

import argparse
import sys

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.control import printable
from runeconsole.core.errors import InvalidInput
from runeconsole.services.reply import Replies
from runeconsole.services.reply.text import MAX_CHARS

DEFAULT_LINES = 40


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    say = subparsers.add_parser(
        "say",
        parents=[common],
        help="paste a message into an agent's pane and submit it (no attaching)",
    )
    say.add_argument("agent", metavar="AGENT", help="{role}-{name}")
    say.add_argument(
        "words",
        nargs="*",
        metavar="TEXT",
        help="the message (words joined by spaces; - reads stdin)",
    )
    say.add_argument(
        "--text", metavar="TEXT", help="the message as one argument (--text=-x for one with a dash)"
    )
    say.add_argument("--json", action="store_true")
    say.set_defaults(func=say_to)

    peek = subparsers.add_parser(
        "peek", parents=[common], help="an agent's screen and its last assistant message"
    )
    peek.add_argument("agent", metavar="AGENT", help="{role}-{name}")
    peek.add_argument(
        "--lines", type=int, default=DEFAULT_LINES, metavar="N", help="screen lines to show"
    )
    peek.add_argument("--json", action="store_true")
    peek.set_defaults(func=peek_at)


def _text(args: argparse.Namespace) -> str:
    words: list[str] = args.words
    if args.text is not None:
        if words:
            raise InvalidInput("give the message as TEXT or as --text, not both")
        return str(args.text)
    if not words:
        raise InvalidInput("say what? runeconsole say AGENT TEXT (or - to read stdin)")
    if words != ["-"]:
        return " ".join(words)
    if sys.stdin.isatty():
        raise InvalidInput("say AGENT -: pipe the message in (or give it as words)")
    text = sys.stdin.read(MAX_CHARS + 1)
    if len(text) > MAX_CHARS:
        raise InvalidInput(f"the message on stdin is longer than {MAX_CHARS:,} characters")
    return text


def say_to(args: argparse.Namespace) -> int:
    result = Replies(open_project(args)).say(args.agent, _text(args))
    if args.json:
        print_json(result.to_json())
    else:
        lines = f"{result.lines} lines" if result.lines > 1 else "1 line"
        print(f"{result.agent}: said {lines} ({result.chars} characters) into {result.pane}")
    return 0


def peek_at(args: argparse.Namespace) -> int:
    result = Replies(open_project(args)).peek(args.agent, args.lines)
    if args.json:
        print_json(result.to_json())
        return 0
    state = result.activity or result.status or "?"
    waiting = f": {result.waiting_for}" if result.waiting_for else ""
    print(printable(f"{result.agent}  {state}{waiting}"))
    where = result.screen_from or "no screen"
    note = f" ({result.screen_note})" if result.screen_note else ""
    print(printable(f"── screen: {where}{note}"))
    for line in result.screen.splitlines():
        print(printable(line))
    message = result.last_message
    if message is None:
        print("── last message: none")
        return 0
    print(printable(f"── last message ({message.source}, {message.at or 'when unknown'})"))
    for line in message.text.splitlines():
        print(printable(line))
    return 0
