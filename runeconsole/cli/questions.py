"""``runeconsole question ask|list|answer`` and ``runeconsole status-line``.

``ask`` is what an orchestrator calls from Bash: it persists the question, blocks
(woken by file events) until the operator, the timeout or the cap decides, and
prints the relay block for the worker. Exit codes: 0 answered, 1 error, 2 bad
input (nothing written), 3 not surfaced (task no longer in progress, or the relay
is disabled). Nothing here imports Textual, so these commands start fast.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.worker_questions import (
    ANOTHER_TOOL,
    ANSWERED,
    DISCARDED,
    PENDING,
    URGENCIES,
    AskRequest,
    Question,
    Questions,
    RelayDisabled,
    format_left,
    validate_timeout,
)

NOT_SURFACED = 3
STATE_MARK = {
    PENDING: ("!", "red"),
    "non-blocking": ("·", "yellow"),
    ANSWERED: ("✓", "green"),
    DISCARDED: ("×", "grey"),
}
QUESTION_WIDTH = 60


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = subparsers.add_parser("question", help="worker questions: ask, list, answer")
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)

    ask = actions.add_parser(
        "ask",
        parents=[common],
        help="persist a worker question and wait for its answer",
        description="Persist a worker question, wait until the operator, the timeout or the "
        "cap decides, and print the relay block (ANSWER / TASK / DECIDED_BY). Exit codes: "
        "0 answered, 1 error, 2 bad input (nothing written), 3 not surfaced (the task is no "
        "longer in progress, or question_relay is disabled).",
    )
    ask.add_argument("--task", required=True, help="task id, e.g. task-3")
    ask.add_argument("--question", required=True)
    ask.add_argument(
        "--option",
        action="append",
        default=[],
        dest="options",
        metavar="'A: …'",
        help="an option (at least 2, in order A, B, …)",
    )
    ask.add_argument("--urgency", choices=URGENCIES, default="blocking")
    ask.add_argument("--context", default="")
    ask.add_argument("--worker", help="the asking worker's name (for the per-worker cap)")
    ask.add_argument("--team", help="Claude Code team whose task file is checked")
    ask.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds before option A is chosen (default: question_relay.timeout_seconds, "
        "if auto_answer_on_timeout)",
    )
    ask.add_argument("--signal-dir", metavar="DIR", help="rune-work-… directory (default: newest)")
    ask.add_argument(
        "--json", action="store_true", help="print {id, task_id, seq, answer, decided_by}"
    )
    ask.set_defaults(func=ask_question)

    listing = actions.add_parser(
        "list", parents=[common], help="open questions first, with time left before auto-answer"
    )
    listing.add_argument("--json", action="store_true")
    listing.add_argument(
        "--all",
        action="store_true",
        help="include answered and discarded, and the archived ones (runeconsole prune)",
    )
    listing.set_defaults(func=list_questions)

    wait = actions.add_parser(
        "wait",
        parents=[common],
        help="wait for an open question's answer (after a restart) and print the relay block",
        description="For an orchestrator that lost its `ask` (compaction, crash): wait on a "
        "question it finds still open in `question list` instead of asking it again. Exit "
        "codes as for `ask`.",
    )
    wait.add_argument("id", metavar="ID", help="SIGNAL_DIR/TASK.qSEQ (see `question list`)")
    wait.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="choose option A S seconds from now (default: the deadline the question has)",
    )
    wait.add_argument("--json", action="store_true")
    wait.set_defaults(func=wait_question)

    answer = actions.add_parser("answer", parents=[common], help="answer an open question")
    answer.add_argument("id", metavar="ID", help="SIGNAL_DIR/TASK.qSEQ (see `question list`)")
    choice = answer.add_mutually_exclusive_group(required=True)
    choice.add_argument(
        "--option",
        action="append",
        dest="options",
        metavar="KEY",
        help="option key (A) or number (1); repeat it for a multi-select question "
        "(--option A --option C)",
    )
    choice.add_argument("--text", help="a free-text answer")
    choice.add_argument(
        "--field",
        action="append",
        dest="fields",
        metavar="NAME=VALUE",
        help="a form's field (an MCP server's elicitation), repeated for each: accepts it",
    )
    choice.add_argument(
        "--decline",
        action="store_const",
        const="decline",
        dest="form_action",
        help="decline a form (the MCP server is told the user said no)",
    )
    choice.add_argument(
        "--cancel",
        action="store_const",
        const="cancel",
        dest="form_action",
        help="cancel a form (dismissed without a choice)",
    )
    answer.add_argument("--json", action="store_true")
    answer.set_defaults(func=answer_question)

    status = subparsers.add_parser(
        "status-line", parents=[common], help="one line for tmux status-right (⚡2 questions)"
    )
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=status_line)


def warn(message: str) -> None:
    print(f"runeconsole: {message}", file=sys.stderr, flush=True)


def ask_question(args: argparse.Namespace) -> int:
    request = AskRequest(
        task_id=args.task,
        question=args.question,
        options=args.options,
        urgency=args.urgency,
        context=args.context,
        worker=args.worker,
        team=args.team,
        timeout_seconds=args.timeout,
        signal_dir=args.signal_dir,
    )
    request.validated()  # refuse bad input before looking for a root or config
    service = Questions(open_project(args))
    try:
        question, check = service.ask(request)
    except RelayDisabled as exc:
        if args.json:
            print_json(exc.to_json())
        raise
    if check.warning:
        warn(check.warning)
    if question.discarded:
        warn(f"discarded {question.id}: {question.discarded}")
        if args.json:
            print_json(question.relay_json(None))
        return NOT_SURFACED
    return _relay(service, question, args.json, f"asked {question.id}; waiting for the answer")


def wait_question(args: argparse.Namespace) -> int:
    if args.timeout is not None:
        validate_timeout(args.timeout)
    service = Questions(open_project(args))
    question = service.get(args.id)
    if question.discarded:
        raise RuneError(f"{question.id} was discarded ({question.discarded}); nobody waits for it")
    if args.timeout is not None and question.answer is None:
        question.deadline = service.clock.now() + timedelta(seconds=args.timeout)
    return _relay(service, question, args.json, f"waiting for the answer to {question.id}")


def _relay(service: Questions, question: Question, as_json: bool, waiting: str) -> int:
    """Wait unless already decided, then print what goes back to the worker."""
    answer = question.answer
    if answer is None:
        warn(f"{waiting} ({_deadline_note(question)})")
        answer = service.wait(question)
    if answer.error:
        raise RuneError(f"{question.id}: the answer file is unreadable: {answer.error}")
    if as_json:
        print_json(question.relay_json(answer))
    else:
        print(answer.relay_block(), flush=True)
    return 0


def _deadline_note(question: Question) -> str:
    if question.deadline is None and not question.asked_here:
        return f"asked by {ANOTHER_TOOL}, which applies its own timeout: waits until answered"
    if question.deadline is None:
        return "no timeout: waits until answered"
    return f"option A is chosen at {question.deadline:%H:%M:%S}Z if nobody answers"


def list_questions(args: argparse.Namespace) -> int:
    service = Questions(open_project(args))
    questions = service.list(include_closed=args.all)
    if args.all:
        from runeconsole.cli.common import warn_archive
        from runeconsole.services.retention import Retention

        retention = Retention(service.project)
        questions = sorted(
            [*questions, *retention.archived_questions(questions)], key=Question.sort_key
        )
        warn_archive(retention)
    now = service.clock.now()
    if args.json:
        print_json([question.to_json(now) for question in questions])
        return 0
    if not questions:
        print(f"no open questions under {service.base}")
        return 0
    marks = [_mark(q) for q in questions]
    print_table(
        ("", "ID", "WORKER", "AGE", "AUTO-ANSWER", "QUESTION"),
        [_row(q, now, mark) for q, (mark, _) in zip(questions, marks, strict=True)],
        [tint for _, tint in marks],
    )
    return 0


def _mark(question: Question) -> tuple[str, str]:
    if question.state == PENDING and not question.blocking:
        return STATE_MARK["non-blocking"]
    return STATE_MARK.get(question.state, ("?", "red"))


def _row(question: Question, now: datetime, mark: str) -> tuple[str, ...]:
    return (
        mark,
        question.id,
        question.worker or "",
        format_age(question.age(now)),
        countdown(question, now),
        _summary(question),
    )


def countdown(question: Question, now: datetime) -> str:
    """``in 2m13s`` / ``due`` / ``never`` for open questions; who decided for answered ones."""
    if question.answer is not None:
        return f"by {question.answer.decided_by or 'unreadable answer'}"
    if question.discarded:
        return "discarded"
    from runeconsole.services.claude.questions.answers import expires_in

    expiry = expires_in(question, now)  # a relayed Claude Code call: never auto-answered
    if expiry is not None:
        return "expires" if expiry <= 0 else f"expires in {format_left(expiry)}"
    if not question.error and not question.asked_here:
        return f"asked by {ANOTHER_TOOL}"
    left = question.seconds_left(now)
    if left is None:
        return "never"
    return "due" if left <= 0 else f"in {format_left(left)}"


def _summary(question: Question) -> str:
    if question.error:
        return f"unreadable: {question.error}"
    text = question.first_line
    return text if len(text) <= QUESTION_WIDTH else text[: QUESTION_WIDTH - 1] + "…"


def answer_question(args: argparse.Namespace) -> int:
    from runeconsole.services.claude.questions.answers import answer as give

    service = Questions(open_project(args))
    question = service.get(args.id)
    text = args.text
    if args.fields is not None or args.form_action is not None:
        text = _form_answer(question, args.form_action, args.fields or [])
    answer = give(service, question, options=args.options, text=text)
    if args.json:
        print_json(answer.to_json())
    else:
        print(f"answered {args.id}: {answer.answer}")
    return 0


def _form_answer(question: Question, action: str | None, given: list[str]) -> str:
    from runeconsole.services.claude.questions import elicitation

    typed: dict[str, str] = {}
    for item in given:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise InvalidInput(f"--field {item!r}: give it as NAME=VALUE")
        typed[name.strip()] = value
    return elicitation.typed_answer(question.fields, action or "accept", typed)


def status_line(args: argparse.Namespace) -> int:
    # Lenient: a tmux status bar shows the count whatever the talisman holds.
    count = Questions(open_project(args, strict=False)).open_count()
    if args.json:
        print_json(count.to_json())
    elif count.total:
        print(count.line())
    return 0
