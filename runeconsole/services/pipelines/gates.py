"""The human gates that wait on the operator, found the way the runner that runs the
pipeline finds them: for ``pipeline_runner`` (and a pipeline moved by hand with the
harness's CLI) a ``wait.human`` node whose DOT status is ``active``; for the engine, a
gate its latest run waits on (``engine.py``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import read_json_object
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.pipelines.engine import EngineRun
from runeconsole.services.pipelines.graph import ACTIVE, Node
from runeconsole.services.pipelines.record import ENGINE, PIPELINE_RUNNER, Gate, Pipeline


def waiting_gates(pipeline: Pipeline, signals: Path, run: EngineRun | None) -> list[Gate]:
    plan = pipeline.plan
    if plan is None:
        return []
    human = {node.node_id: node for node in plan.nodes if node.is_human_gate}
    gates: list[Gate] = []
    if pipeline.runner == ENGINE and run is not None:
        for node_id, since in sorted(run.waiting_gates(set(human)).items()):
            gates.append(_gate(pipeline, human[node_id], ENGINE, since, str(run.run_dir)))
        return gates
    for node in human.values():
        if node.status == ACTIVE:
            gates.append(_gate(pipeline, node, PIPELINE_RUNNER, _marker_time(signals, node), ""))
    return gates


def _gate(
    pipeline: Pipeline, node: Node, runner: str, since: datetime | None, run_dir: str
) -> Gate:
    plan = pipeline.plan
    assert plan is not None
    mode = node.attrs.get("mode") or node.attrs.get("gate") or ""
    return Gate(
        pipeline.stem,
        pipeline.prd,
        node.node_id,
        node.label,
        node.acceptance,
        mode,
        runner,
        since if since is not None else pipeline.changed_at,
        run_dir,
        tuple(plan.upstream(node.node_id)),
    )


def _marker_time(signals: Path, node: Node) -> datetime | None:
    """When the runner began to wait: its ``.gate-wait`` marker's timestamp."""
    try:
        marker = read_json_object(signals / f"{node.node_id}.gate-wait")
    except UnreadableFile:
        return None
    return parse_iso(marker.get("timestamp"))
