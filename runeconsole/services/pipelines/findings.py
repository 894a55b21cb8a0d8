"""What is wrong with a pipeline that the harness itself does not see (each one met in
the harness's own runs):

- a gate marker (``signals/<stem>/<gate>.gate-wait``) left after its gate was decided:
  ``gate_watch`` reports it as waiting for ever;
- the runner gone while nodes are unfinished (the runner that read a half-rewritten DOT
  as an empty, "complete" pipeline and exited);
- an exit reached without its human gate approved (the engine that ran past a gate);
- a rejection loop (a scored ``fail`` on a gate: the runner cannot move it back and
  writes an "orphaned" escalation for it again and again).
"""

from __future__ import annotations

import os
from pathlib import Path

from runeconsole.services.pipelines.engine import EngineRun
from runeconsole.services.pipelines.graph import ACTIVE, EXIT, FINISHED
from runeconsole.services.pipelines.record import NO_RUNNER, Pipeline

LOOP_AFTER = 3  # escalations of one gate consumed before it is called a loop


def _names(directory: Path) -> list[str]:
    try:
        return [entry.name for entry in os.scandir(directory)]
    except OSError:
        return []


def findings_of(pipeline: Pipeline, signals: Path, run: EngineRun | None) -> list[str]:
    plan = pipeline.plan
    if plan is None:
        return []
    found: list[str] = []
    names = _names(signals)
    processed = _names(signals / "processed")
    for name in sorted(names):
        if not name.endswith(".gate-wait"):
            continue
        node_id = name[: -len(".gate-wait")]
        node = plan.node(node_id)
        status = pipeline.status_of(node) if node else "gone"
        if status != ACTIVE:
            found.append(
                f"{node_id}: its gate marker is left after the gate was decided ({status}); "
                "the harness's gate_watch still reports it as waiting"
            )
    gates = {node.node_id for node in plan.nodes if node.is_human_gate}
    for gate in sorted(gates):
        escalations = sum(1 for name in processed if name.endswith(f"-{gate}.json"))
        rejected = f"{gate}.json" in names or (signals / "guidance" / f"{gate}.txt").exists()
        node = plan.node(gate)
        if node and pipeline.status_of(node) == ACTIVE and rejected and escalations >= LOOP_AFTER:
            found.append(
                f"{gate}: rejection loop: the runner cannot send a rejected gate back and "
                f"escalated it {escalations} times; reject it with runeconsole gate reject "
                "(the gate is failed and its work sent back) or approve it"
            )
    unfinished = [n.node_id for n in plan.nodes if pipeline.status_of(n) not in FINISHED]
    if pipeline.runner != NO_RUNNER and pipeline.runner_alive is False and unfinished:
        ended = run is not None and run.ended is not None and pipeline.runner == "engine"
        if not ended:
            found.append(
                f"its runner ({pipeline.runner}) is gone with {len(unfinished)} node(s) "
                f"unfinished: {', '.join(unfinished[:4])}{' …' if len(unfinished) > 4 else ''}"
            )
    exits = [n for n in plan.nodes if n.handler == EXIT and pipeline.status_of(n) in FINISHED]
    for exit_node in exits:
        unapproved = [
            gate
            for gate in plan.upstream(exit_node.node_id)
            if gate in gates
            and (node := plan.node(gate))
            and pipeline.status_of(node) not in FINISHED
        ]
        if run is not None and pipeline.runner == "engine":
            unapproved = sorted(set(unapproved) | set(run.run_past(gates)))
        for gate in unapproved:
            found.append(
                f"{exit_node.node_id} was reached without gate {gate} approved"
                + (" (the engine ran past it: no PIPELINE_HUMAN_GATE_TIMEOUT)" if run else "")
            )
    return found
