"""``runeconsole pipelines``, ``pipeline STEM_OR_PRD`` and ``gate list|approve|reject``
over the harness's own files (``tests/interop/pipeline``), as text a person reads at 80
columns and as JSON, with their exit codes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.cli import gates as gates_cli
from tests.support.cli import CliResult
from tests.support.pipelines import (
    PIPELINES,
    STEMS,
    WRITTEN,
    fixture_run,
    scenario_root,
    whole_root,
)

Cli = Callable[..., CliResult]


def assert_fits_80_columns(text: str) -> None:
    long = [line for line in text.splitlines() if len(line) > 80]
    assert not long, long


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return whole_root(tmp_path)


def test_pipelines_lists_every_pipeline_with_its_state_counts_gates_and_runner(
    cli: Cli, root: Path
) -> None:
    done = cli("--root", str(root), "pipelines")
    assert done.code == 0, done.err
    rows = {line.split()[1]: line for line in done.out.splitlines() if line[:1].isalpha()}
    assert rows["gate-reject-demo"].split()[:2] == ["gate", "gate-reject-demo"]
    assert "1✓ 1☑ 1▶ 2·" in rows["gate-reject-demo"]
    assert "review" in rows["gate-reject-demo"]
    assert "pipeline_runner gone" in rows["gate-reject-demo"]
    assert rows["auth-demo"].split()[:2] == ["running", "auth-demo"]
    assert rows["engine-demo"].split()[:3] == ["complete", "engine-demo", "5✓"]
    assert "engine gone" in rows["engine-demo"]
    assert rows["tdd-ci-demo"].split()[:3] == ["pending", "tdd-ci-demo", "22·"]
    assert "PRD-GATE-REJECT-DEMO · gate-reject-demo (pipeline_runner)" in done.out
    assert "! review: rejection loop" in done.out
    assert "· pending" in done.out.splitlines()[-1]  # the marks' legend
    assert_fits_80_columns(done.out)


def test_pipelines_json_is_each_pipelines_whole_record(cli: Cli, root: Path) -> None:
    done = cli("--root", str(root), "pipelines", "--json")
    assert done.code == 0, done.err
    listed = {item["pipeline"]: item for item in json.loads(done.out)}
    assert sorted(listed) == STEMS
    reject = listed["gate-reject-demo"]
    assert reject["state"] == "gate"
    assert reject["counts"]["active"] == 1
    assert [g["key"] for g in reject["gates"]] == ["gate-reject-demo/review"]
    assert reject["runner"]["kind"] == "pipeline_runner"
    assert len(listed["tdd-ci-demo"]["nodes"]) == 22


def test_an_unreadable_dot_is_a_row_that_says_why(cli: Cli, root: Path) -> None:
    (root / PIPELINES / "tdd-ci-demo.dot").write_text("")
    cut = (WRITTEN / PIPELINES / "gate-demo.dot").read_bytes()[:700]
    (root / PIPELINES / "cut.dot").write_bytes(cut)
    (root / PIPELINES / "binary.dot").write_bytes(b"\xff\xfe\x00")
    done = cli("--root", str(root), "pipelines")
    assert done.code == 0, done.err
    assert "unreadable: the file is empty (being rewritten?)" in done.out
    assert "unreadable: line 31: the file ends inside the graph" in done.out
    assert "unreadable: not UTF-8 text" in done.out
    rows = [line.split() for line in done.out.splitlines() if line.startswith("unreadable")]
    assert sorted(row[1] for row in rows) == ["binary", "cut", "tdd-ci-demo"]
    assert "complete" not in [row[0] for row in rows]
    listed = cli("--root", str(root), "pipelines", "--json").json()
    assert isinstance(listed, list)
    as_json = {p["pipeline"]: p for p in listed}
    assert as_json["cut"]["state"] == "unreadable"
    assert as_json["cut"]["error"].startswith("line 31")


def test_pipelines_in_a_root_without_any_says_where_it_looked(cli: Cli, tmp_path: Path) -> None:
    done = cli("--root", str(tmp_path), "pipelines")
    assert done.code == 0
    assert done.out.startswith("no pipelines under ")
    assert cli("--root", str(tmp_path), "pipelines", "--json").json() == []


def test_pipeline_shows_its_nodes_in_dependency_order_with_edges_and_agents(
    cli: Cli, root: Path
) -> None:
    done = cli("--root", str(root), "pipeline", "gate-reject-demo")
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == (
        "gate-reject-demo · PRD-GATE-REJECT-DEMO · gate-reject-demo (pipeline_runner)"
    )
    nodes = lines[lines.index("NODES (in dependency order)") + 1 : lines.index("GATES WAITING") - 1]
    firsts = [line for line in nodes if line.strip()[:1] in "✓☑◐▶✗·"]
    assert [line.split()[1] for line in firsts] == [
        "start",
        "validate_graph",
        "review",
        "decide",
        "finalize",
    ]
    indents = [len(line) - len(line.lstrip()) for line in firsts]
    assert indents == [2, 4, 6, 8, 10]  # a layer deeper each
    assert "▶ review  active · wait.human" in done.out
    assert "← start, decide [fail] · no agent" in done.out
    assert "← decide [pass] · no agent" in done.out
    assert "review  Human review (business) · pipeline_runner" in done.out
    assert "approve: runeconsole gate approve gate-reject-demo review" in done.out
    assert "FINDINGS" in done.out and "rejection loop" in done.out
    assert "TIMELINE" in done.out and "escalation" in done.out
    assert_fits_80_columns(done.out)


def test_pipeline_is_found_by_its_prd_id_too(cli: Cli, root: Path) -> None:
    by_prd = cli("--root", str(root), "pipeline", "PRD-ENGINE-FALLTHROUGH-DEMO", "--json")
    assert by_prd.code == 0, by_prd.err
    found = by_prd.json()
    assert isinstance(found, dict)
    assert found["pipeline"] == "engine-fallthrough-demo"
    said = [m["what"] for m in found["timeline"]]
    assert "edge decide -> finalize [$review.approval = 'approved']" in said
    assert any("ran past" in f for f in found["findings"])


def test_the_agent_and_the_queue_entry_named_by_a_node_are_shown_on_it(
    cli: Cli, tmp_path: Path
) -> None:
    root = scenario_root(tmp_path, "auth-demo")
    identities = root / ".claude" / "state" / "identities"
    identities.mkdir(parents=True)
    (identities / "orchestrator-impl_auth.json").write_text(
        json.dumps(
            {
                "agent_id": "orchestrator-impl_auth-1",
                "role": "orchestrator",
                "name": "impl_auth",
                "status": "active",
                "session_id": "orch-impl_auth",
                "worktree_path": ".claude/worktrees/impl_auth",
                "last_seen": "2026-11-29T01:13:00Z",
            }
        )
    )
    (identities / "broken.json").write_text("{not json")
    (root / ".claude" / "state" / "merge-queue.json").write_text(
        json.dumps(
            {
                "entries": [
                    {
                        "entry_id": "mq-7",
                        "branch": "worktree-impl_auth",
                        "node_id": "impl_auth",
                        "status": "pending",
                    }
                ]
            }
        )
    )
    done = cli("--root", str(root), "pipeline", "auth-demo")
    assert done.code == 0, done.err
    at = done.out.index("◐ impl_auth  impl_complete · codergen · bead BD-101")
    block = " ".join(done.out[at : done.out.index("review_auth", at)].split())
    assert "agent orchestrator-impl_auth (active, " in block
    assert "queue mq-7 (pending)" in block
    assert "no agent" not in block
    assert "1 identity file(s) unreadable, left out: broken" in done.err
    as_json = cli("--root", str(root), "pipeline", "auth-demo", "--json").json()
    assert isinstance(as_json, dict)
    assert as_json["work"]["impl_auth"]["queue"] == [{"entry_id": "mq-7", "status": "pending"}]
    assert [a["key"] for a in as_json["work"]["impl_auth"]["agents"]] == ["orchestrator-impl_auth"]
    assert "start" not in as_json["work"]


def test_an_unreadable_merge_queue_is_said_and_the_pipeline_still_shown(
    cli: Cli, root: Path
) -> None:
    (root / ".claude" / "state").mkdir(parents=True, exist_ok=True)
    (root / ".claude" / "state" / "merge-queue.json").write_text("nope")
    done = cli("--root", str(root), "pipeline", "gate-demo")
    assert done.code == 0, done.err
    assert "the merge queue is unreadable" in done.err
    assert "NODES" in done.out


def test_an_unknown_pipeline_is_a_usage_error(cli: Cli, root: Path) -> None:
    done = cli("--root", str(root), "pipeline", "nope")
    assert done.code == 2
    assert "no pipeline 'nope'" in done.err


def test_gate_list_shows_the_waiting_gates(cli: Cli, tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    done = cli("--root", str(root), "gate", "list")
    assert done.code == 0, done.err
    assert done.out.splitlines()[0].split() == ["GATE", "PRD", "RUNNER", "WAITING", "LABEL"]
    assert done.out.splitlines()[1].split()[:3] == [
        "gate-demo/review",
        "PRD-GATE-DEMO",
        "pipeline_runner",
    ]
    listed = cli("--root", str(root), "gate", "list", "--json").json()
    assert isinstance(listed, list)
    assert [g["key"] for g in listed] == ["gate-demo/review"]
    assert listed[0]["since"] == "2026-11-29T01:13:38Z"  # the runner's gate marker


def test_gate_list_with_none_waiting_says_so(cli: Cli, tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-pass-demo")
    done = cli("--root", str(root), "gate", "list")
    assert (done.code, done.out) == (0, "no human gate is waiting\n")


def test_gate_approve_moves_the_gate_and_prints_what_it_wrote(cli: Cli, tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    done = cli("--root", str(root), "gate", "approve", "gate-demo", "review")
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == "approved gate-demo/review by operator (transition, for the pipeline_runner)"
    assert lines[1] == "  wrote:"
    assert "    .pipelines/pipelines/gate-demo.dot" in lines
    assert "    .pipelines/pipelines/gate-demo.dot.transitions.jsonl" in lines
    assert lines[-1].startswith("  moved as the harness CLI's transition does")
    again = cli("--root", str(root), "gate", "approve", "gate-demo", "review")
    assert again.code == 3
    assert "not waiting (it is validated)" in again.err


def test_gate_approve_json_is_the_answer_written(cli: Cli, tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "engine-demo", at_gate=True)
    done = cli(
        "--root",
        str(root),
        "gate",
        "approve",
        "PRD-ENGINE-DEMO",
        "review",
        "--reason",
        "looks good",
        "--json",
    )
    assert done.code == 0, done.err
    answered = done.json()
    assert isinstance(answered, dict)
    assert (answered["answer"], answered["how"], answered["reason"]) == (
        "approve",
        "response",
        "looks good",
    )
    response = fixture_run("engine-demo").relative_to(WRITTEN)
    signal = response / "nodes" / "review" / "signals" / "INPUT_RESPONSE.signal"
    assert answered["written"] == [str(signal)]
    assert (root / signal).read_bytes() == (WRITTEN / signal).read_bytes()


def test_gate_reject_needs_a_reason(cli: Cli, tmp_path: Path) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    done = cli("--root", str(root), "gate", "reject", "gate-demo", "review")
    assert done.code == 2
    assert "--reason" in done.err
    blank = cli("--root", str(root), "gate", "reject", "gate-demo", "review", "--reason", " ")
    assert blank.code == 2
    assert 'status="active"' in (root / PIPELINES / "gate-demo.dot").read_text()


def test_gate_reject_with_no_runner_fails_the_gate_and_says_what_went_back(
    cli: Cli, tmp_path: Path
) -> None:
    root = scenario_root(tmp_path, "gate-reject-demo")
    done = cli(
        "--root",
        str(root),
        "gate",
        "reject",
        "gate-reject-demo",
        "review",
        "--reason",
        "wrong graph",
    )
    assert done.code == 0, done.err
    assert done.out.startswith("rejected gate-reject-demo/review by operator (transition")
    assert "  reason: wrong graph" in done.out
    assert "  sent back: validate_graph" in done.out
    assert_fits_80_columns(done.out)


def test_a_hostile_gate_name_is_refused(cli: Cli, root: Path) -> None:
    for stem, node in (("../x", "review"), ("gate-reject-demo", "../x")):
        done = cli("--root", str(root), "gate", "approve", stem, node)
        assert done.code == 2, (stem, node, done.err)
    assert not (root / ".claude" / "state" / "gates").exists()


def test_an_answer_on_a_read_only_root_is_refused_before_anything_is_written(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = scenario_root(tmp_path, "gate-demo", at_gate=True)
    before = (root / PIPELINES / "gate-demo.dot").read_bytes()
    monkeypatch.setattr(gates_cli, "unwritable", lambda at: f"{at} is on a read-only file system")
    done = cli("--root", str(root), "gate", "approve", "gate-demo", "review")
    assert done.code == 1
    assert "is on a read-only file system; nothing was written" in done.err
    assert (root / PIPELINES / "gate-demo.dot").read_bytes() == before
    assert not (root / ".claude" / "state" / "gates").exists()
    assert cli("--root", str(root), "gate", "list").code == 0  # reading still works


def test_no_bad_file_makes_a_command_crash(cli: Cli, root: Path) -> None:
    """Garbage where every kind of file is read: each command still answers, and says
    what it could not read."""
    signals = root / PIPELINES / "signals"
    (signals / "gate-reject-demo" / "review.json").write_text("garbage")
    (signals / "gate-demo" / "review.gate-wait").write_text("[1, 2")
    processed = signals / "gate-pass-demo" / "processed"
    (processed / "20261129T011416Z-review-validation.json").write_text('{"x":')
    (root / PIPELINES / "auth-demo.dot.transitions.jsonl").write_bytes(b"\x00\xff\n{")
    (fixture_run("engine-demo", root) / "pipeline-events.jsonl").write_text(
        '{"type": 5}\nnot json\n[]\n{"type": "node.started", "sequence": "x", "data": 3}\n'
    )
    for entry in (signals / "gate-cli-demo").rglob("*"):
        if entry.is_file():
            entry.unlink()
    for directory in sorted((signals / "gate-cli-demo").rglob("*"), reverse=True):
        directory.rmdir()
    (signals / "gate-cli-demo").rmdir()
    (signals / "gate-cli-demo").write_text("a file where a directory belongs")
    (root / ".claude" / "attractor" / "pipelines" / "gate-demo-run-20991231T000000Z").mkdir()
    (root / PIPELINES / "dir.dot").mkdir()
    (root / PIPELINES / "dangling.dot").symlink_to(root / "nowhere.dot")
    os.mkfifo(root / PIPELINES / "fifo.dot")
    commands = [
        ("pipelines",),
        ("pipelines", "--json"),
        ("gate", "list"),
        ("gate", "list", "--json"),
    ]
    stems = ["gate-cli-demo", "engine-demo", "auth-demo", "gate-pass-demo", "gate-demo"]
    commands += [("pipeline", stem) for stem in [*stems, "dir", "dangling", "fifo"]]
    commands += [("pipeline", stem, "--json") for stem in stems]
    for command in commands:
        done = cli("--root", str(root), *command)
        assert done.code == 0, (command, done.err)
        assert "internal error" not in done.err, command
    listing = cli("--root", str(root), "pipelines").out
    assert "unreadable: is a directory, not a file" in listing
    assert "unreadable: file is missing" in listing
    fifo = cli("--root", str(root), "pipeline", "fifo")
    assert "unreadable: " in fifo.out
