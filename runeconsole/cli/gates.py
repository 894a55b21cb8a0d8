"""``runeconsole gate list|approve|reject``: the human gates of the harness's pipelines,
listed and answered the way the runner that runs each pipeline reads the answer, once.
Exit codes are ``RuneError``'s: 2 bad input (nothing written), 3 a gate answered already
(the first answer wins), 1 otherwise (a read-only root among them)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from runeconsole.cli.common import open_project, print_json
from runeconsole.cli.pipelines import WIDTH, _line, age_text, cut, read_all, warn, wrapped
from runeconsole.core.control import printable
from runeconsole.core.errors import RuneError
from runeconsole.core.files import unwritable
from runeconsole.services.pipelines.answers import (
    APPROVE,
    REJECT,
    SIGNAL,
    TRANSITION,
    Answered,
    GateAnswers,
)


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    gate = subparsers.add_parser(
        "gate",
        help="human gates: list the waiting ones, approve or reject one",
        description="A pipeline's human gate (wait.human) answered the way the runner that "
        "runs it reads the answer; once (exit 3 when it was answered already).",
    )
    actions = gate.add_subparsers(dest="action", metavar="ACTION", required=True)
    waiting = actions.add_parser("list", parents=[common], help="every human gate waiting")
    waiting.add_argument("--json", action="store_true")
    waiting.set_defaults(func=list_gates)
    for action, text in (
        (APPROVE, "approve a waiting gate: the pipeline goes on"),
        (REJECT, "reject a waiting gate: the work it guards goes back, with your reason"),
    ):
        answer = actions.add_parser(action, parents=[common], help=text)
        answer.add_argument("stem", metavar="STEM", help="the pipeline (DOT stem or PRD id)")
        answer.add_argument("node", metavar="NODE", help="the gate's node id")
        answer.add_argument(
            "--reason",
            required=action == REJECT,
            default="",
            help="why (a rejection's reason is the rework's guidance)",
        )
        if action == APPROVE:
            answer.add_argument(
                "--score",
                type=float,
                metavar="N",
                help="the score of a pass signal (pipeline_runner; default 10)",
            )
        answer.add_argument("--by", default="operator", metavar="NAME", help="who answers")
        answer.add_argument(
            "--via",
            choices=(SIGNAL, TRANSITION),
            help="signal: what a live pipeline_runner reads (the default while one runs); "
            "transition: the harness CLI's move under the DOT's lock (the default otherwise)",
        )
        answer.add_argument("--json", action="store_true")
        answer.set_defaults(func=answer_gate, answer=action)


def list_gates(args: argparse.Namespace) -> int:
    project = open_project(args)
    pipelines = read_all(project)
    for pipeline in pipelines:
        if pipeline.error and pipeline.plan is None:
            warn(f"{pipeline.stem}: unreadable: {pipeline.error}; its gates cannot be seen")
    gates = [gate for pipeline in pipelines for gate in pipeline.gates]
    if args.json:
        print_json([gate.to_json() for gate in gates])
        return 0
    if not gates:
        print("no human gate is waiting")
        return 0
    now = project.clock.now()
    headers = ("GATE", "PRD", "RUNNER", "WAITING", "LABEL")
    rows = [
        (cut(g.key, 34), cut(g.prd, 22), g.runner, age_text(g.since, now), g.label) for g in gates
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    widths[-1] = 0
    for cells in (headers, *rows):
        print(cut(_line(cells, widths), WIDTH))
    return 0


def answer_gate(args: argparse.Namespace) -> int:
    project = open_project(args)
    refused = unwritable(project.root)
    if refused:
        raise RuneError(f"cannot answer {args.stem}/{args.node}: {refused}; nothing was written")
    done = GateAnswers(project).answer(
        args.stem,
        args.node,
        args.answer,
        reason=args.reason or "",
        by=args.by,
        score=getattr(args, "score", None),
        via=args.via,
    )
    if args.json:
        print_json(done.to_json())
        return 0
    for line in answered_lines(done):
        print(line)
    return 0


def answered_lines(done: Answered) -> list[str]:
    verb = "approved" if done.answer == APPROVE else "rejected"
    lines = wrapped(
        f"{verb} {done.gate.key} by {done.by} ({done.how}, for the {done.gate.runner})", "", "  "
    )
    if done.reason:
        lines += wrapped(f"reason: {done.reason}", "  ", "    ")
    lines += _listed("wrote", done.written)
    if done.reworked:
        lines += wrapped(f"sent back: {', '.join(done.reworked)}", "  ", "    ")
    if done.note:
        lines += wrapped(done.note, "  ", "  ")
    return lines


def _listed(verb: str, paths: Iterable[str]) -> list[str]:
    """Each path whole (one may be copied from here), on a line of its own."""
    found = [printable(path) for path in paths]
    return [f"  {verb}:", *(f"    {path}" for path in found)] if found else []
