"""``runeconsole review AGENT`` and ``review approve|comment|send|history AGENT``.

``review AGENT`` prints what the agent changed against its base (the merge-base with the
main branch, or ``--base REF``): the commits ahead, every file with its lines added and
removed and where the change lives, then the diff (``--stat``: without it). Exit 1 when
the agent has no worktree, or it cannot be read (gone, not a repository).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.review.changes import Changes
from runeconsole.services.review.records import NEW, OLD, ReviewRecord
from runeconsole.services.review.report import (
    approval_message,
    comment_message,
    review_line,
    review_report,
    sent_message,
)
from runeconsole.services.review.service import Reviews

ACTIONS = ("approve", "comment", "send", "history")
DESCRIPTION = """\
review AGENT [--stat] [--base REF] [--json]   what AGENT changed, and the diff
review approve AGENT [--json]                 its branch joins the merge queue
review comment AGENT [--file F [--line N [--side old]]] TEXT [--json]
                                              a comment on a line, a file or the change
review send AGENT [--json]                    the open review's comments, as one prompt
review history AGENT [--json]                 every review of AGENT, newest first"""


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    review = subparsers.add_parser(
        "review",
        parents=[common],
        help="what an agent changed; approve, comment on and send back its work",
        usage="runeconsole review [AGENT | approve | comment | send | history] ...",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    review.add_argument("target", metavar="AGENT|ACTION")
    review.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    review.set_defaults(func=run, common_parser=common)


def _parser(action: str | None, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    prog = "runeconsole review" + (f" {action}" if action else "")
    parser = argparse.ArgumentParser(prog=prog, parents=[common])
    parser.add_argument("agent", metavar="AGENT", help="{role}-{name}")
    parser.add_argument("--json", action="store_true")
    if action is None:
        parser.add_argument("--stat", action="store_true", help="files and numbers, no diff")
        parser.add_argument("--base", metavar="REF", help="compare with REF instead of main")
        parser.set_defaults(act=show)
    elif action == "comment":
        parser.add_argument("text", metavar="TEXT", nargs="?")
        parser.add_argument("--text", dest="text_option", metavar="TEXT", help=argparse.SUPPRESS)
        parser.add_argument("--file", metavar="F", help="the file, as the diff names it")
        parser.add_argument("--line", type=int, metavar="N", help="its line, counting from 1")
        parser.add_argument(
            "--side", choices=(NEW, OLD), default=NEW, help="old: a line the change removed"
        )
        parser.set_defaults(act=comment)
    else:
        parser.set_defaults(act={"approve": approve, "send": send, "history": history}[action])
    return parser


def run(args: argparse.Namespace) -> int:
    action = args.target if args.target in ACTIONS else None
    words = list(args.rest) if action else [args.target, *args.rest]
    parsed = _parser(action, args.common_parser).parse_intermixed_args(words, namespace=args)
    reviews = Reviews(open_project(parsed))
    return int(parsed.act(reviews, parsed) or 0)


def _print_or_json(args: argparse.Namespace, data: Any, text: str) -> None:
    if args.json:
        print_json(data)
    else:
        print(text)


# -- review AGENT --------------------------------------------------------------------------


def show(reviews: Reviews, args: argparse.Namespace) -> int:
    report = review_report(reviews, args.agent, args.base, stat=args.stat)
    if args.json:
        print_json(report)
        return 1 if report["error"] else 0
    changes = Changes.from_json(report)
    if changes.error:
        raise RuneError(f"{args.agent}: {changes.error}")
    open_review = reviews.records.open_review(args.agent)
    print(overview(args.agent, changes, report["review_state"], open_review))
    if report.get("diff"):
        sys.stdout.write("\n" + report["diff"])
    return 0


def overview(agent: str, changes: Changes, state: str, review: ReviewRecord | None) -> str:
    base = (changes.base_ref or "").removeprefix("refs/heads/")
    lines = [
        f"{agent}  {changes.branch or '(detached HEAD)'}  {changes.worktree}",
        f"against {base} at {(changes.base or '')[:8]}, head {(changes.head or '')[:8]}: "
        f"{changes.summary()}  [{state}]",
    ]
    lines += [f"  {c.short} {c.subject}" for c in changes.commits]
    if changes.ahead > len(changes.commits):
        lines.append(f"  … and {changes.ahead - len(changes.commits)} more")
    if changes.files:
        lines.append("")
    width = max((len(f.shown_path) for f in changes.files), default=0)
    for f in changes.files:
        numbers = "binary" if f.binary else f"+{f.added} −{f.removed}"
        lines.append(f"  {numbers:>12}  {f.shown_path:<{width}}  {f.status}, {', '.join(f.where)}")
    if review is not None and review.comments:
        count = len(review.comments)
        lines.append(f"\nopen review: {count} comment{'s' * (count != 1)} not sent yet")
    return "\n".join(lines)


# -- decisions ---------------------------------------------------------------------------


def approve(reviews: Reviews, args: argparse.Namespace) -> int:
    approval = reviews.approve(args.agent)
    for warning in approval.warnings:
        print(f"runeconsole: warning: {warning}", file=sys.stderr)
    data = approval.to_json()
    _print_or_json(args, data, approval_message(args.agent, data))
    return 0


def comment(reviews: Reviews, args: argparse.Namespace) -> int:
    text = args.text if args.text_option is None else args.text_option
    if text is None:
        raise InvalidInput("review comment needs the comment's TEXT")
    record = reviews.comment(args.agent, text, file=args.file, line=args.line, side=args.side)
    data = record.to_json()
    _print_or_json(args, data, comment_message(args.agent, data))
    return 0


def send(reviews: Reviews, args: argparse.Namespace) -> int:
    data = reviews.send(args.agent).to_json()
    _print_or_json(args, data, f"{sent_message(args.agent, data)}:\n\n{data['prompt']}")
    return 0


def history(reviews: Reviews, args: argparse.Namespace) -> int:
    records = reviews.records.history(args.agent)
    if args.json:
        print_json([r.to_json() for r in records])
        return 0
    if not records:
        print(f"no reviews of {args.agent} yet")
    for record in records:
        print(review_line(record))
    return 0
