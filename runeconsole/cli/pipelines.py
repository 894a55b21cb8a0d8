"""``runeconsole pipelines`` and ``pipeline STEM_OR_PRD``: the harness's DOT pipelines,
read beside it (``gate list|approve|reject`` answers their human gates: ``cli/gates.py``).

Reading never fails on a bad file: a DOT that cannot be read is shown as ``unreadable:
reason`` (with its last good counts, where there were any); an unreadable identity or
merge queue is said on stderr and the rest shown. Exit codes are ``RuneError``'s: 2 bad
input (nothing written), 3 a gate answered already (the first answer wins), 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.control import printable
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.pipelines.agents import NodeWork, work_by_node
from runeconsole.services.pipelines.engine import latest_runs, read_run
from runeconsole.services.pipelines.graph import Node, Plan
from runeconsole.services.pipelines.record import NO_RUNNER, Gate, Pipeline
from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.pipelines.timeline import Moment, timeline
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry

WIDTH = 80
# A node's status as one mark (the legend is printed under the listing).
MARKS = {
    "accepted": "✓",
    "validated": "☑",
    "impl_complete": "◐",
    "active": "▶",
    "failed": "✗",
    "pending": "·",
}
LEGEND = "  ".join(f"{mark} {status}" for status, mark in MARKS.items())
MAX_INDENT = 8  # layers deeper than this are drawn at this depth (the line must fit)
CONDITION_WIDTH = 32
TIMELINE_SHOWN = 20


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    listing = subparsers.add_parser(
        "pipelines",
        parents=[common],
        help="the harness's DOT pipelines: state, node counts, gates waiting, runner",
        description="One row per .pipelines/pipelines/*.dot: its state, its nodes counted by "
        "status, the human gates waiting, who runs it (alive or gone) and when it last "
        "changed, then what is wrong that the harness does not see.",
    )
    listing.add_argument("--json", action="store_true", help="a list of pipelines, every field")
    listing.set_defaults(func=list_pipelines)

    one = subparsers.add_parser(
        "pipeline",
        parents=[common],
        help="one pipeline: its nodes in dependency order, their agents, gates, timeline",
    )
    one.add_argument("name", metavar="STEM_OR_PRD", help="the DOT's file stem or its PRD id")
    one.add_argument("--json", action="store_true", help="the pipeline, its work and timeline")
    one.add_argument(
        "--timeline",
        type=int,
        default=TIMELINE_SHOWN,
        metavar="N",
        help=f"the newest N moments of its timeline (default {TIMELINE_SHOWN}; 0: none)",
    )
    one.set_defaults(func=show_pipeline)


def warn(message: str) -> None:
    print(f"runeconsole: warning: {message}", file=sys.stderr)


def wrapped(text: str, indent: str, more: str | None = None) -> list[str]:
    """``text`` in lines of at most 80 columns, after ``indent`` (``more`` on the next)."""
    return textwrap.wrap(
        printable(text),
        WIDTH,
        initial_indent=indent,
        subsequent_indent=more if more is not None else indent,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def cut(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


# -- pipelines ------------------------------------------------------------------------------


def counts_text(pipeline: Pipeline) -> str:
    """``3✓ 1▶ 2·``: each status that has nodes, done first; ``-`` when never read."""
    if pipeline.plan is None:
        return "-"
    counts = pipeline.counts()
    text = " ".join(f"{counts[s]}{mark}" for s, mark in MARKS.items() if counts.get(s))
    return text or "no nodes"


def runner_text(pipeline: Pipeline) -> str:
    if pipeline.runner == NO_RUNNER:
        return "—"
    alive = {True: "alive", False: "gone", None: "?"}[pipeline.runner_alive]
    return f"{pipeline.runner} {alive}"


def age_text(when: datetime | None, now: datetime) -> str:
    return format_age((now - when).total_seconds()) if when else "-"


def gates_text(pipeline: Pipeline) -> str:
    return ", ".join(g.node_id for g in pipeline.gates) if pipeline.gates else "—"


def read_all(project: Project) -> list[Pipeline]:
    return Pipelines(project).list()


def list_pipelines(args: argparse.Namespace) -> int:
    project = open_project(args)
    pipelines = read_all(project)
    if args.json:
        print_json([pipeline.to_json() for pipeline in pipelines])
        return 0
    if not pipelines:
        print(f"no pipelines under {project.root / '.pipelines' / 'pipelines'}")
        return 0
    now = project.clock.now()
    headers = ("STATE", "PIPELINE", "NODES", "GATES", "RUNNER", "CHANGED")
    rows: list[tuple[str, ...]] = [
        (
            p.state,
            cut(p.stem, 26),
            counts_text(p),
            cut(gates_text(p), 16),
            runner_text(p),
            age_text(p.changed_at, now),
        )
        for p in pipelines
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    excess = sum(widths) + 2 * (len(widths) - 1) - WIDTH
    if excess > 0:  # the stems give way first, then the gates' names
        for column, least in ((1, 12), (3, 5)):
            give = min(excess, widths[column] - least)
            if give > 0:
                widths[column] -= give
                excess -= give
                rows = [
                    (*r[:column], cut(r[column], widths[column]), *r[column + 1 :]) for r in rows
                ]
    print(_line(headers, widths))
    for pipeline, row in zip(pipelines, rows, strict=True):
        print(_line(row, widths))
        about = " · ".join(_said(pipeline.prd, pipeline.label, but=pipeline.stem))
        if about:
            print(cut(f"    {about}", WIDTH))
        if pipeline.error:
            kept = " (the counts are its last good reading)" if pipeline.plan else ""
            for line in wrapped(f"unreadable: {pipeline.error}{kept}", "    ", "      "):
                print(line)
        for finding in pipeline.findings:
            for line in wrapped(finding, "    ! ", "      "):
                print(line)
    print(f"\n{LEGEND}")
    return 0


def _said(*parts: str, but: str = "") -> list[str]:
    """The parts that say something: each once, none empty, none ``but``."""
    return [part for part in dict.fromkeys(parts) if part and part != but]


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()


# -- one pipeline ---------------------------------------------------------------------------


def show_pipeline(args: argparse.Namespace) -> int:
    project = open_project(args)
    store = Pipelines(project)
    pipeline = store.get(args.name)
    work = node_work(project, pipeline)
    moments = pipeline_timeline(project, store, pipeline)
    if args.json:
        print_json(
            {
                **pipeline.to_json(),
                "work": {node: found.to_json() for node, found in sorted(work.items())},
                "timeline": [moment.to_json() for moment in moments],
            }
        )
        return 0
    now = project.clock.now()
    for line in header_lines(pipeline, now):
        print(line)
    if pipeline.plan is not None:
        print("\nNODES (in dependency order)")
        for node in pipeline.plan.nodes:
            for line in node_lines(pipeline, pipeline.plan, node, work.get(node.node_id)):
                print(line)
    print("\nGATES WAITING")
    if not pipeline.gates:
        print("  none")
    for gate in pipeline.gates:
        for line in gate_lines(gate, now):
            print(line)
    if pipeline.findings:
        print("\nFINDINGS")
        for finding in pipeline.findings:
            for line in wrapped(finding, "  ! ", "    "):
                print(line)
    if args.timeline > 0:
        print("\nTIMELINE")
        shown = moments[-args.timeline :]
        if len(moments) > len(shown):
            print(f"  ({len(moments) - len(shown)} earlier; --timeline N or --json for more)")
        if not moments:
            print("  nothing yet")
        for moment in shown:
            print(moment_line(moment))
    return 0


def header_lines(pipeline: Pipeline, now: datetime) -> list[str]:
    lines = [cut(" · ".join(_said(pipeline.stem, pipeline.prd, pipeline.label)), WIDTH)]
    runner = runner_text(pipeline)
    if pipeline.runner_pid is not None:
        runner += f" (pid {pipeline.runner_pid})"
    lines.append(
        cut(
            f"state {pipeline.state} · nodes {counts_text(pipeline)} · runner {runner} · "
            f"changed {age_text(pipeline.changed_at, now)} ago",
            WIDTH,
        )
    )
    if pipeline.error:
        kept = (
            "; shown as last read well" if pipeline.plan else "; it has never been read well here"
        )
        lines += wrapped(f"unreadable: {pipeline.error}{kept}", "", "  ")
    return lines


def incoming_text(plan: Plan, node_id: str) -> str:
    edges = []
    for edge in plan.incoming(node_id):
        condition = f" [{cut(edge.condition, CONDITION_WIDTH)}]" if edge.condition else ""
        edges.append(f"{edge.source}{condition}")
    return "← " + ", ".join(edges) if edges else ""


def work_text(work: NodeWork | None) -> str:
    if not work:
        return "no agent"
    parts = [f"agent {key} ({status}, {liveness})" for key, liveness, status in work.agents]
    parts += [f"queue {entry} ({status})" for entry, status in work.entries]
    return ", ".join(parts)


def node_lines(pipeline: Pipeline, plan: Plan, node: Node, work: NodeWork | None) -> list[str]:
    layer = plan.layers.get(node.node_id, 0)
    indent = "  " + "  " * min(layer, MAX_INDENT)
    status = pipeline.status_of(node)
    facts = [status, node.handler or "no handler"]
    if layer > MAX_INDENT:  # drawn at the deepest indent: its layer said in words
        facts.insert(0, f"layer {layer}")
    if node.bead_id:
        facts.append(f"bead {node.bead_id}")
    if node.worker_type:
        facts.append(node.worker_type)
    first = f"{MARKS.get(status, '?')} {node.node_id}  {' · '.join(facts)}"
    lines = wrapped(first, indent, indent + "    ")
    second = " · ".join(p for p in (incoming_text(plan, node.node_id), work_text(work)) if p)
    return lines + wrapped(second, indent + "  ", indent + "    ")


def gate_lines(gate: Gate, now: datetime) -> list[str]:
    kind = f" ({gate.mode})" if gate.mode else ""
    since = f"waiting {age_text(gate.since, now)}" if gate.since else "waiting"
    lines = wrapped(f"{gate.node_id}  {gate.label}{kind} · {gate.runner} · {since}", "  ")
    if gate.acceptance:
        lines += wrapped(gate.acceptance, "    ")
    if gate.upstream:
        lines += wrapped(f"guards {', '.join(gate.upstream)}", "    ")
    lines.append(cut(f"    approve: runeconsole gate approve {gate.stem} {gate.node_id}", WIDTH))
    lines.append(
        cut(f"    reject:  runeconsole gate reject {gate.stem} {gate.node_id} --reason …", WIDTH)
    )
    return lines


def moment_line(moment: Moment) -> str:
    when = moment.at.strftime("%m-%d %H:%M:%S") if moment.at else "?" * 14
    node = moment.node_id or "-"
    return cut(f"  {when}  {moment.who:<9} {node:<14} {moment.what}", WIDTH)


def node_work(project: Project, pipeline: Pipeline) -> dict[str, NodeWork]:
    """What works on each node: identities and merge-queue entries named by its id."""
    if pipeline.plan is None:
        return {}

    try:
        records = Registry(project).list()
    except RuneError as exc:
        warn(f"no agents: {exc.message}")
        records = []
    unreadable = [r for r in records if r.error]
    if unreadable:
        names = ", ".join(r.key for r in unreadable[:3]) + (" …" if len(unreadable) > 3 else "")
        warn(f"{len(unreadable)} identity file(s) unreadable, left out: {names}")
    entries: list[Any] = []
    try:
        state = MergeQueue(project).read()
    except RuneError as exc:
        warn(f"no merge-queue entries: {exc.message}")
    else:
        if state.error:
            warn(f"the merge queue is unreadable, its entries left out: {state.error}")
        else:
            entries = state.ordered()
    nodes = [node.node_id for node in pipeline.plan.nodes]
    return work_by_node(nodes, records, entries)


def pipeline_timeline(project: Project, store: Pipelines, pipeline: Pipeline) -> list[Moment]:
    run_dir = latest_runs(project.root).get(pipeline.stem)
    run = read_run(pipeline.stem, run_dir) if run_dir is not None else None
    if run is not None and run.error:
        warn(f"{run_dir}: the engine's events are unreadable: {run.error}")
    return timeline(store.dot_path(pipeline.stem), store.signal_dir(pipeline.stem), run)


# -- gates ----------------------------------------------------------------------------------
