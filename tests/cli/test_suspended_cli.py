"""The ``suspend``, ``suspended`` and ``checkpoint`` commands, in-process and as processes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli import cli_env
from tests.support.suspended import (
    LOCAL_RUNE_CHECKPOINTS,
    load_fixture,
    modify,
    task_file,
    write_checkpoint,
)


def suspend(cli: Callable, project: Path, *extra: str) -> object:
    return cli(
        "suspend", "--root", str(project), "--task", "7", "--worker", "rune-smith-1",
        "--arc", "arc-1", "--reason", "turn_limit", "--last-action", "parser done",
        "--work-stamp", "20260226-014400", *extra,
    )  # fmt: skip


def test_suspend_list_resume(project: Path, cli: Callable, tmp_path: Path) -> None:
    modify(project, "src/parser.py")
    notes = tmp_path / "notes.md"
    notes.write_text("tokenizer done\n")
    result = suspend(cli, project, "--file-target", "src/fmt.py", "--body-file", str(notes))
    assert result.code == 0, result.err
    path = Path(result.out.strip())
    assert path == project / "tmp/work/20260226-014400/context/arc-1/7.md"
    assert "tokenizer done" in path.read_text()

    listing = cli("suspended", "list", "--root", str(project), "--json").json()
    assert [(r["task_id"], r["verdict"], r["files_pending"]) for r in listing] == [
        ("7", "stale", ["src/fmt.py"])  # as Rune compares: the work is in the stash
    ]
    table = cli("suspended", "list", "--root", str(project))
    assert table.out.splitlines()[0].split()[:3] == ["VERDICT", "TASK", "WORKER"]

    dry = cli("suspended", "resume", "7", "--root", str(project), "--dry-run")
    assert dry.code == 0 and "resume_count: 1/2" in dry.out
    assert "resume_count: 0" in path.read_text()
    done = cli("suspended", "resume", "7", "--root", str(project), "--json")
    assert done.code == 0 and done.json()["resume_count"] == 1 and done.json()["written"]
    assert "resume_count: 1" in path.read_text()


def test_task_metadata_is_written_and_reported(project: Path, cli: Callable, chome: Path) -> None:
    task = task_file(chome, "arc-work-1")
    result = suspend(cli, project, "--no-stash", "--team", "arc-work-1", "--json")
    assert result.code == 0, result.err
    written = result.json()["task"]
    assert written["written"] and written["path"] == str(task)
    assert written["fields"] == {
        "metadata.suspended": True,
        "metadata.context_path": "tmp/work/20260226-014400/context/arc-1/7.md",
    }
    assert "task metadata: task arc-work-1/7: set metadata.suspended=true" in result.err
    done = cli("suspended", "resume", "7", "--root", str(project), "--json")
    assert done.code == 0 and done.json()["task"]["fields"]["status"] == "pending"
    assert json.loads(task.read_text())["metadata"]["suspended"] is False
    plain = suspend(cli, project, "--no-stash")  # no team: said so, nothing written
    assert "not written (no team known: pass --team TEAM)" in plain.err
    bad = suspend(cli, project, "--no-stash", "--team", "../x")
    assert bad.code == 2 and "team" in bad.err


def test_suspend_refuses_bad_ids_with_exit_2(project: Path, cli: Callable) -> None:
    result = cli(
        "suspend", "--root", str(project), "--task", "../7", "--worker", "w", "--arc", "a",
        "--reason", "signal", "--last-action", "x", "--no-stash",
    )  # fmt: skip
    assert result.code == 2 and "not allowed" in result.err


def test_resume_of_corrupt_file_exits_1(project: Path, cli: Callable) -> None:
    path = Path(suspend(cli, project, "--no-stash").out.strip())
    path.write_text(path.read_text().replace("parser done", "parser DONE"))
    result = cli("suspended", "resume", str(path), "--root", str(project))
    assert result.code == 1 and "integrity check FAILED (expected" in result.err


def test_body_from_stdin_as_a_process(project: Path, run_cli: Callable) -> None:
    result = run_cli(
        "suspend", "--root", str(project), "--task", "3", "--worker", "w", "--arc", "arc-9",
        "--reason", "signal", "--last-action", "x", "--body", "-", "--no-stash", "--json",
        input="from stdin\n",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "from stdin" in Path(json.loads(result.stdout)["path"]).read_text()


@pytest.mark.parametrize("source", ["stdin", "file"])
@pytest.mark.e2e
def test_an_over_limit_body_is_refused_not_truncated(
    project: Path, run_cli: Callable, tmp_path: Path, source: str
) -> None:
    body = "é" * (2 * 1024 * 1024) + "!"  # 4 MiB + 1 byte: a cut at 4 MiB would split nothing
    notes = tmp_path / "notes.md"
    notes.write_text(body)
    given = ["--body", "-"] if source == "stdin" else ["--body-file", str(notes)]
    result = run_cli(
        "suspend", "--root", str(project), "--task", "3", "--worker", "w", "--arc", "arc-9",
        "--reason", "signal", "--last-action", "x", "--no-stash", *given,
        input=body if source == "stdin" else "",
    )  # fmt: skip
    assert result.returncode == 1 and "larger than 4194304 bytes" in result.stderr
    assert not (project / "tmp/work").exists()


def test_checkpoint_list_and_resume(project: Path, cli: Callable, chome: Path) -> None:
    path = write_checkpoint(project, load_fixture(LOCAL_RUNE_CHECKPOINTS / "checkpoint_v3.json"))
    listing = cli("checkpoint", "list", "--root", str(project), "--json").json()
    assert listing[0]["action"] == "resume" and listing[0]["from_version"] == 3
    table = cli("checkpoint", "list", "--root", str(project))
    assert "arc-1707849600000" in table.out and "v3" in table.out

    dry = cli("checkpoint", "resume", "--root", str(project), "--dry-run")
    assert dry.code == 0 and "would change:" in dry.out and "migrate v3 -> v4" in dry.out
    assert json.loads(path.read_text())["schema_version"] == 3

    done = cli("checkpoint", "resume", "arc-1707849600000", "--root", str(project),
               "--session-pid", "77", "--json")  # fmt: skip
    assert done.code == 0
    assert done.json()["resume_from"] == "design_extraction"  # added pending by v18
    saved = json.loads(path.read_text())
    assert saved["schema_version"] == 20 and saved["owner_pid"] == 77
    assert saved["config_dir"] == str(chome)


def test_checkpoint_resume_errors(project: Path, cli: Callable) -> None:
    assert cli("checkpoint", "resume", "--root", str(project)).code == 1
    cp = load_fixture(LOCAL_RUNE_CHECKPOINTS / "checkpoint_v1.json")
    cp["session_nonce"] = "nope"
    write_checkpoint(project, cp)
    result = cli("checkpoint", "resume", "--root", str(project))
    assert result.code == 1 and "possible tampering" in result.err
    bad = project / ".claude/arc/arc-2/checkpoint.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{")
    result = cli("checkpoint", "resume", "arc-2", "--root", str(project), "--json")
    assert result.code == 3 and result.json()["action"] == "fresh_start"
    result = cli("checkpoint", "resume", "arc-2", "--root", str(project), "--dry-run")
    assert result.code == 3 and "fresh start" in result.out and "would change" not in result.out


def test_checkpoint_resume_help_documents_the_exit_statuses(cli: Callable) -> None:
    text = " ".join(cli("checkpoint", "resume", "--help").out.split())
    assert "0 resume" in text and "3 fresh start" in text


@pytest.mark.e2e
def test_concurrent_resumes_never_lose_a_count(project: Path, cli: Callable) -> None:
    """Four processes race to resume one file: exactly max_resume_count (2) win."""
    path = Path(suspend(cli, project, "--no-stash").out.strip())
    command = [
        sys.executable,
        "-m",
        "runeconsole",
        "suspended",
        "resume",
        "7",
        "--root",
        str(project),
    ]
    racers = [
        subprocess.Popen(command, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    outcomes = [(r.wait(timeout=60), r.stderr.read().decode()) for r in racers]
    for racer in racers:
        racer.stdout.close()
        racer.stderr.close()
    assert sorted(code for code, _ in outcomes) == [0, 0, 1, 1]
    assert all("max resume_count (2) reached" in err for code, err in outcomes if code)
    listing = cli("suspended", "list", "--root", str(project), "--json").json()
    assert [(r["resume_count"], r["verdict"]) for r in listing] == [(2, "exhausted")]
    assert "resume_count: 2" in path.read_text()


def test_symlinked_context_files_are_listed_unreadable_and_never_followed(
    project: Path, cli: Callable, tmp_path: Path
) -> None:
    path = Path(suspend(cli, project, "--no-stash").out.strip())
    outside = tmp_path / "outside.md"
    outside.write_text(path.read_text())
    (path.parent / "99.md").symlink_to(outside)
    listing = cli("suspended", "list", "--root", str(project), "--json").json()
    assert [(r["task_id"], r["verdict"]) for r in listing] == [("7", "ok"), ("99", "unreadable")]
    assert "symbolic link" in listing[1]["detail"]
    refused = cli("suspended", "resume", "99", "--root", str(project))
    assert refused.code == 2 and "outside the project root" in refused.err
    assert outside.read_text() == path.read_text()
