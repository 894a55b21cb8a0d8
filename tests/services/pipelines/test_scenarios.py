"""Each of the harness's scenarios (``tests/interop/pipeline/README.md``) as a project
root of its own, read by ``Pipelines``: its state, counts, waiting gates, runner, and the
findings the harness does not see (a gate marker left behind in B and B2, a runner gone
with nodes unfinished in B and D, a rejection loop in D, a gate the engine ran past in F,
nothing wrong in C and E); the counts as the harness's own ``status`` printed them; a
runner found alive by its process; the timeline of who moved what."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.services.pipelines.engine import latest_runs, read_run
from runeconsole.services.pipelines.record import ENGINE, NO_RUNNER, PIPELINE_RUNNER, Pipeline
from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.pipelines.timeline import Moment, timeline
from runeconsole.services.project import Project
from tests.support.pipelines import FIXTURES, PIPELINES, SCENARIOS, live_runner, scenario_root

STALE_MARKER = "its gate marker is left after the gate was decided"
RUNNER_GONE = "is gone with"
LOOP = "rejection loop"
RAN_PAST = "the engine ran past it"


def read_one(root: Path) -> Pipeline:
    (pipeline,) = Pipelines(Project(root)).list()
    return pipeline


def nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {status: n for status, n in counts.items() if n}


# letter, at the gate?, state, counts, gates waiting, runner, findings (their kinds)
CASES = [
    (
        "A",
        False,
        "running",
        {"pending": 1, "impl_complete": 1, "validated": 2, "accepted": 1},
        [],
        NO_RUNNER,
        [],
    ),
    (
        "B",
        False,
        "pending",
        {"pending": 2, "validated": 2, "accepted": 1},
        [],
        PIPELINE_RUNNER,
        [STALE_MARKER, RUNNER_GONE],
    ),
    (
        "B",
        True,
        "gate",
        {"pending": 2, "active": 1, "validated": 1, "accepted": 1},
        ["review"],
        PIPELINE_RUNNER,
        [RUNNER_GONE],  # the snapshot's runner is not running here
    ),
    (
        "B2",
        False,
        "complete",
        {"validated": 3, "accepted": 2},
        [],
        PIPELINE_RUNNER,
        [STALE_MARKER],
    ),
    ("C", False, "complete", {"validated": 2, "accepted": 3}, [], PIPELINE_RUNNER, []),
    (
        "D",
        False,
        "gate",
        {"pending": 2, "active": 1, "validated": 1, "accepted": 1},
        ["review"],
        PIPELINE_RUNNER,
        [LOOP, RUNNER_GONE],
    ),
    ("E", False, "complete", {"accepted": 5}, [], ENGINE, []),
    (
        "E",
        True,
        "gate",
        {"pending": 2, "active": 1, "accepted": 2},
        ["review"],
        ENGINE,
        [RUNNER_GONE],
    ),
    ("F", False, "running", {"active": 1, "accepted": 4}, [], ENGINE, [RAN_PAST]),
    ("G", False, "pending", {"pending": 22}, [], NO_RUNNER, []),
]


@pytest.mark.parametrize(
    ("letter", "at_gate", "state", "counts", "gates", "runner", "findings"),
    CASES,
    ids=[f"{case[0]}{'-at-gate' if case[1] else ''}" for case in CASES],
)
def test_each_scenario_reads_as_the_harness_left_it(
    tmp_path: Path,
    letter: str,
    at_gate: bool,
    state: str,
    counts: dict[str, int],
    gates: list[str],
    runner: str,
    findings: list[str],
) -> None:
    root = scenario_root(tmp_path, SCENARIOS[letter], at_gate=at_gate)
    pipeline = read_one(root)
    assert pipeline.stem == SCENARIOS[letter]
    assert pipeline.error is None
    assert pipeline.state == state
    assert nonzero(pipeline.counts()) == counts
    assert [gate.node_id for gate in pipeline.gates] == gates
    assert pipeline.runner == runner
    assert pipeline.runner_alive is (None if runner == NO_RUNNER else False)
    assert len(pipeline.findings) == len(findings), pipeline.findings
    for finding, kind in zip(pipeline.findings, findings, strict=True):
        assert kind in finding
    assert pipeline.is_complete() == (state == "complete")


@pytest.mark.parametrize(
    ("said", "letter", "at_gate"),
    [
        ("A-status-final", "A", False),
        ("B-status-at-gate", "B", True),
        ("B-status-final", "B", False),
        ("B2-status-final", "B2", False),
        ("C-status-final", "C", False),
        ("D-status-final", "D", False),
    ],
)
def test_the_nodes_are_those_the_harness_status_printed(
    tmp_path: Path, said: str, letter: str, at_gate: bool
) -> None:
    status = json.loads((FIXTURES / "cli-stdout" / f"{said}.json").read_text())
    pipeline = read_one(scenario_root(tmp_path, SCENARIOS[letter], at_gate=at_gate))
    assert pipeline.plan is not None
    assert pipeline.prd == status["prd_ref"]
    assert nonzero(pipeline.counts()) == status["summary"]
    ours = {
        node.node_id: {
            "handler": node.handler,
            "status": pipeline.status_of(node),
            "bead_id": node.bead_id,
            "worker_type": node.worker_type,
        }
        for node in pipeline.plan.nodes
    }
    theirs = {
        node["node_id"]: {k: node[k] for k in ("handler", "status", "bead_id", "worker_type")}
        for node in status["nodes"]
    }
    assert ours == theirs


def test_the_gate_waits_since_the_runner_s_marker_and_guards_the_work_before_it(
    tmp_path: Path,
) -> None:
    (gate,) = read_one(scenario_root(tmp_path, "gate-demo", at_gate=True)).gates
    assert gate.key == "gate-demo/review"
    assert gate.since is not None and gate.since.isoformat() == "2026-11-29T01:13:38.159671+00:00"
    assert gate.mode == "business"
    assert gate.acceptance == "AC-1 [manual]: a human has looked at the result"
    assert gate.upstream == ("validate_graph", "start")


def test_a_live_pipeline_runner_is_found_by_its_command_line(tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    store = Pipelines(Project(root))
    with live_runner(root, "gate-demo") as pid:
        (pipeline,) = store.list()
        assert (pipeline.runner, pipeline.runner_pid, pipeline.runner_alive) == (
            PIPELINE_RUNNER,
            pid,
            True,
        )
        assert pipeline.findings == []  # waiting at a gate, with its runner alive: all well
    store.forget_runners()
    (pipeline,) = store.list()
    assert (pipeline.runner_pid, pipeline.runner_alive) == (None, False)
    assert [RUNNER_GONE in f for f in pipeline.findings] == [True]


def test_a_live_engine_runner_is_found_and_its_run_waits_at_the_gate(tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "engine-demo", at_gate=True)
    with live_runner(root, "engine-demo", kind=ENGINE) as pid:
        pipeline = read_one(root)
    assert (pipeline.runner, pipeline.runner_pid, pipeline.runner_alive) == (ENGINE, pid, True)
    (gate,) = pipeline.gates
    assert (gate.runner, Path(gate.run_dir).name) == (ENGINE, "engine-demo-run-20261129T011507Z")
    assert pipeline.findings == []


def test_an_engine_gate_answered_on_disk_no_longer_waits(tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "engine-demo", at_gate=True)
    (run,) = (root / ".claude" / "attractor" / "pipelines").iterdir()
    response = run / "nodes" / "review" / "signals" / "INPUT_RESPONSE.signal"
    response.parent.mkdir(parents=True)
    response.write_text('{"response": "approve"}\n')
    assert read_one(root).gates == []


def test_a_dot_that_turns_unreadable_keeps_its_last_good_reading_and_is_never_complete(
    tmp_path: Path,
) -> None:
    root = scenario_root(tmp_path, "gate-pass-demo")
    dot = root / PIPELINES / "gate-pass-demo.dot"
    whole = dot.read_bytes()
    store = Pipelines(Project(root))
    (pipeline,) = store.list()
    assert pipeline.state == "complete"
    for broken in (b"", whole[: len(whole) // 2], b"digraph { }"):
        dot.write_bytes(broken)
        (pipeline,) = store.list()
        assert pipeline.state == "unreadable" and not pipeline.is_complete()
        assert pipeline.error
        assert pipeline.plan is not None and len(pipeline.plan.nodes) == 5  # the last good one
        assert pipeline.to_json()["counts"]["accepted"] == 3
    dot.write_bytes(whole)
    (pipeline,) = store.list()
    assert (pipeline.state, pipeline.error) == ("complete", None)


def test_a_dot_never_read_well_has_no_plan_and_no_gates(tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-reject-demo")
    (root / PIPELINES / "gate-reject-demo.dot").write_bytes(b"digraph {")
    pipeline = read_one(root)
    assert (pipeline.state, pipeline.plan, pipeline.gates) == ("unreadable", None, [])
    assert pipeline.findings == []


def moments(root: Path, stem: str) -> list[Moment]:
    store = Pipelines(Project(root))
    run_dir = latest_runs(root).get(stem)
    run = read_run(stem, run_dir) if run_dir is not None else None
    return timeline(store.dot_path(stem), store.signal_dir(stem), run)


def test_the_timeline_says_who_moved_what(tmp_path: Path) -> None:
    auth = moments(scenario_root(tmp_path, "auth-demo"), "auth-demo")
    assert {m.who for m in auth} == {"cli"}
    said = [m.what for m in auth]
    assert said.index("route-decision fail: impl_auth") < said.index(
        "route-decision pass: finalize"
    )
    assert said[-1] == "finalize: validated -> accepted"
    assert [m.at for m in auth] == sorted(m.at for m in auth if m.at)

    passed = moments(scenario_root(tmp_path, "gate-pass-demo"), "gate-pass-demo")
    assert [(m.who, m.node_id) for m in passed] == [
        ("worker", "validate_graph"),
        ("operator", "review"),
        ("worker", "decide"),
    ]
    assert passed[1].what == "pass (score 8.0): human reviewer: approved"

    engine = moments(scenario_root(tmp_path, "engine-demo"), "engine-demo")
    events = [m for m in engine if m.who == "engine"]
    assert [m.what for m in events][:2] == ["started", "started"]
    assert "edge decide -> finalize [$review.approval = 'approved']" in [m.what for m in events]
    answer = [m for m in engine if m.who == "operator"]
    assert [(m.node_id, m.what) for m in answer] == [("review", "answered approve: looks good")]


def test_the_rejection_loop_s_escalations_are_in_the_timeline(tmp_path: Path) -> None:
    looped = moments(scenario_root(tmp_path, "gate-reject-demo"), "gate-reject-demo")
    escalations = [m for m in looped if m.what.startswith("escalation")]
    assert len(escalations) == 10  # nine consumed, the last one left unconsumed
    assert escalations[-1].what.endswith("(not consumed yet)")
    assert all(m.who == "runner" and m.node_id == "review" for m in escalations)
