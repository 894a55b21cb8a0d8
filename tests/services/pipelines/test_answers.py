"""A human gate answered the way the runner that runs it reads the answer, compared
byte for byte with what the harness wrote in the matching scenario: an approval by the
CLI's transition (B), by the scored pass signal a live ``pipeline_runner`` takes (C), by
the engine's ``INPUT_RESPONSE.signal`` (E); a rejection as rework for a live runner
(where a scored fail would loop, D) and as the CLI's ``failed`` + ``route-decision fail``
with none (A). Once: the first answer wins, between processes too; a hostile name is
refused before any path is built."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.pipelines.answers import (
    APPROVE,
    REJECT,
    RESPONSE,
    REWORK,
    SIGNAL,
    TRANSITION,
    AlreadyAnswered,
    GateAnswers,
)
from runeconsole.services.pipelines.dot import parse
from runeconsole.services.pipelines.dot_edit import set_status
from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.project import Project
from tests.support.cli import cli_env
from tests.support.pipelines import (
    PIPELINES,
    WRITTEN,
    fixture_run,
    live_runner,
    scenario_root,
)

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")


def answers(root: Path) -> GateAnswers:
    return GateAnswers(Project(root))


def statuses(dot: Path) -> dict[str, str]:
    return {n: a.get("status", "") for n, a in parse(dot.read_text()).nodes.items()}


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


# -- approve ------------------------------------------------------------------------------


def test_approve_by_transition_writes_the_dot_the_harness_cli_wrote(tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    done = answers(root).answer("gate-demo", "review", APPROVE, via=TRANSITION)
    assert done.how == TRANSITION
    dot = root / PIPELINES / "gate-demo.dot"
    assert dot.read_bytes() == (WRITTEN / PIPELINES / "gate-demo.dot").read_bytes()
    (ours,) = lines(root / PIPELINES / "gate-demo.dot.transitions.jsonl")
    (theirs,) = lines(WRITTEN / PIPELINES / "gate-demo.dot.transitions.jsonl")
    assert list(ours) == list(theirs)  # the harness's keys, in its order
    same = ("file", "command", "node_id", "new_status")
    assert {k: ours[k] for k in same} == {k: theirs[k] for k in same}
    assert STAMP.match(str(ours["timestamp"]))
    assert str(ours["log"]).endswith("] review: active -> validated")
    assert not (root / PIPELINES / "signals" / "gate-demo" / "review.gate-wait").exists()
    assert not (root / PIPELINES / "gate-demo.dot.lock").exists()  # removed, as the CLI does
    assert Pipelines(Project(root)).list()[0].gates == []


def test_approve_for_a_live_runner_is_the_scored_pass_signal_it_took_in_c(
    tmp_path: Path,
) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    before = (root / PIPELINES / "gate-demo.dot").read_bytes()
    with live_runner(root, "gate-demo"):
        done = answers(root).answer("gate-demo", "review", APPROVE, score=8)
    assert done.how == SIGNAL
    signal = root / PIPELINES / "signals" / "gate-demo" / "review-validation.json"
    assert done.written == [str(signal.relative_to(root))]
    harness = (
        WRITTEN
        / PIPELINES
        / "signals"
        / "gate-pass-demo"
        / "processed"
        / "20261129T011416Z-review-validation.json"
    )
    ours, theirs = json.loads(signal.read_text()), json.loads(harness.read_text())
    assert list(ours) == list(theirs)
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$", ours.pop("_ts"))
    assert ours.pop("_pid") == os.getpid()
    del theirs["_ts"], theirs["_pid"]
    assert ours == theirs
    assert signal.read_text().startswith('{\n  "result": "pass",\n')  # indented as theirs
    assert (root / PIPELINES / "gate-demo.dot").read_bytes() == before  # the runner moves it


def test_approve_for_the_engine_is_the_input_response_the_human_wrote_in_e(
    tmp_path: Path,
) -> None:
    root = scenario_root(tmp_path, "engine-demo", at_gate=True)
    done = answers(root).answer("engine-demo", "review", APPROVE, reason="looks good")
    assert done.how == RESPONSE
    relative = fixture_run("engine-demo").relative_to(WRITTEN)
    response = relative / "nodes" / "review" / "signals" / "INPUT_RESPONSE.signal"
    assert done.written == [str(response)]
    assert (root / response).read_bytes() == (WRITTEN / response).read_bytes()
    assert Pipelines(Project(root)).list()[0].gates == []
    with pytest.raises(AlreadyAnswered):
        answers(root).answer("engine-demo", "review", REJECT, reason="no")


# -- reject -------------------------------------------------------------------------------


def test_reject_for_a_live_runner_sends_the_work_back_and_the_gate_waits_again(
    tmp_path: Path,
) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    dot = root / PIPELINES / "gate-demo.dot"
    with live_runner(root, "gate-demo"):
        done = answers(root).answer("gate-demo", "review", REJECT, reason="the graph is wrong")
    assert done.how == REWORK
    assert done.reworked == ["validate_graph"]
    now = statuses(dot)
    assert (now["review"], now["validate_graph"]) == ("active", "pending")
    assert (now["start"], now["decide"], now["finalize"]) == ("validated", "pending", "pending")
    assert 'fillcolor="lightyellow"' in dot.read_text().split("validate_graph [")[1].split("]")[0]
    guidance = root / PIPELINES / "signals" / "gate-demo" / "guidance" / "validate_graph.txt"
    assert guidance.read_text() == (
        "The human gate review rejected this work.\n\nthe graph is wrong\n"
    )
    ops = lines(root / PIPELINES / "gate-demo.dot.ops.jsonl")
    harness_ops = lines(WRITTEN / PIPELINES / "gate-demo.dot.ops.jsonl")
    assert ops[: len(harness_ops)] == harness_ops  # appended, the harness's lines kept
    (added,) = ops[len(harness_ops) :]
    modify = next(o for o in harness_ops if o["command"] == "node modify")
    assert list(added) == list(modify)
    assert added["updates"] == {"status": "pending", "fillcolor": "lightyellow"}
    assert (added["file"], added["node_id"]) == (
        ".pipelines/pipelines/gate-demo.dot",
        "validate_graph",
    )
    assert not (root / PIPELINES / "signals" / "gate-demo" / "review-validation.json").exists()
    assert "would loop" in done.note


def auth_demo_at_its_gate(tmp_path: Path) -> Path:
    """Scenario A as it stood when the human rejected: impl_auth impl_complete, the gate
    review_auth active, the rest not reached (the DOT the CLI had then)."""
    root = scenario_root(tmp_path, "auth-demo")
    dot = root / PIPELINES / "auth-demo.dot"
    text = dot.read_text()
    for node, status in (
        ("review_auth", "active"),
        ("decide_auth", "pending"),
        ("finalize", "pending"),
    ):
        text = set_status(text, node, status)
    dot.write_text(text)
    (root / PIPELINES / "auth-demo.dot.transitions.jsonl").unlink()
    return root


def test_reject_with_no_runner_is_the_cli_s_failed_and_route_decision_fail(
    tmp_path: Path,
) -> None:
    root = auth_demo_at_its_gate(tmp_path)
    done = answers(root).answer("auth-demo", "review_auth", REJECT, reason="login breaks")
    assert done.how == TRANSITION
    assert done.reworked == ["impl_auth"]
    now = statuses(root / PIPELINES / "auth-demo.dot")
    assert (now["review_auth"], now["impl_auth"]) == ("failed", "active")
    ours = lines(root / PIPELINES / "auth-demo.dot.transitions.jsonl")
    theirs = lines(WRITTEN / PIPELINES / "auth-demo.dot.transitions.jsonl")[3:5]  # A's rejection
    assert [list(o) for o in ours] == [list(t) for t in theirs]
    timeless = [{k: v for k, v in o.items() if k not in ("timestamp", "log")} for o in ours]
    assert timeless == [
        {k: v for k, v in t.items() if k not in ("timestamp", "log")} for t in theirs
    ]
    assert str(ours[0]["log"]).endswith("] review_auth: active -> failed")
    guidance = root / PIPELINES / "signals" / "auth-demo" / "guidance" / "impl_auth.txt"
    assert "login breaks" in guidance.read_text()


def test_reject_with_no_runner_sends_finished_work_back_as_route_decision_would_not(
    tmp_path: Path,
) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    done = answers(root).answer("gate-demo", "review", REJECT, reason="no")
    assert (done.how, done.reworked) == (TRANSITION, ["validate_graph"])
    now = statuses(root / PIPELINES / "gate-demo.dot")
    assert (now["review"], now["validate_graph"]) == ("failed", "pending")
    route = lines(root / PIPELINES / "gate-demo.dot.transitions.jsonl")[-1]
    assert (route["command"], route["result"], route["affected"]) == ("route-decision", "fail", [])


def test_a_rejection_needs_a_reason(tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    with pytest.raises(InvalidInput, match="needs a reason"):
        answers(root).answer("gate-demo", "review", REJECT, reason="  ")
    assert not (root / ".claude").exists()


# -- once ---------------------------------------------------------------------------------


def test_the_first_answer_wins(tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    with live_runner(root, "gate-demo"):
        answers(root).answer("gate-demo", "review", APPROVE)
        with pytest.raises(AlreadyAnswered, match="answered already: approve by operator"):
            answers(root).answer("gate-demo", "review", REJECT, reason="too late", by="bob")
    # the signal is not consumed (no runner here): the DOT still says active, but the
    # claim stands; a transition now would answer twice
    with pytest.raises(AlreadyAnswered):
        answers(root).answer("gate-demo", "review", APPROVE, via=TRANSITION)


def answer_in_a_process(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "--root", str(root), "gate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )


@pytest.mark.parametrize("round_", range(3))
def test_two_processes_answering_at_once_one_wins_the_other_exits_3(
    tmp_path: Path, round_: int
) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    both = [
        answer_in_a_process(root, "approve", "gate-demo", "review", "--by", "alice"),
        answer_in_a_process(root, "reject", "gate-demo", "review", "--reason", "no", "--by", "bob"),
    ]
    results = [(p.wait(timeout=60), *p.communicate()) for p in both]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 3], results
    (won,) = [r for r in results if r[0] == 0]
    (lost,) = [r for r in results if r[0] == 3]
    assert won[1].startswith(("approved gate-demo/review", "rejected gate-demo/review"))
    assert "gate-demo/review" in lost[2] and lost[1] == ""
    transitions = lines(root / PIPELINES / "gate-demo.dot.transitions.jsonl")
    assert transitions[0]["new_status"] in ("validated", "failed")
    assert len([t for t in transitions if t.get("command") == "transition"]) == 1
    (claim,) = (root / ".claude" / "state" / "gates" / "gate-demo").iterdir()
    assert json.loads(claim.read_text())["by"] in ("alice", "bob")


@pytest.mark.parametrize(
    ("stem", "node"),
    [
        ("../x", "review"),
        ("gate-demo", "../x"),
        ("..", "review"),
        ("gate-demo", ".."),
        ("gate-demo", "a/b"),
        ("/etc", "review"),
        ("gate-demo", ""),
        ("gate-demo", "re\x00view"),
    ],
)
def test_a_hostile_stem_or_node_is_refused_before_any_path_is_built(
    tmp_path: Path, stem: str, node: str
) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    before = tree(root)
    with pytest.raises(RuneError) as refused:
        answers(root).answer(stem, node, APPROVE)
    assert refused.value.exit_code == 2
    assert tree(root) == before
    assert not (tmp_path / "x").exists()
