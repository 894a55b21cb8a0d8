"""Hook files: both field sets, unknown fields kept, git-sourced files, signals, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.files import atomic_write_json
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.signals import Signals
from tests.support.cli import cli_env

HARNESS_HOOK = {
    "hook_id": "hook-orchestrator-auth-1",
    "role": "orchestrator",
    "name": "auth",
    "phase": "executing",
    "last_committed_node": "impl_login",
    "resumption_instructions": "continue with the refresh endpoint",
    "predecessor_hook_id": None,
    "created_at": "2026-02-26T01:00:00Z",
    "updated_at": "2026-02-26T01:10:00Z",
    "merged_at": None,
    "harness_only_field": {"kept": True},
}


def hook_signals(root: Path) -> list[dict]:
    return [s.payload for s in Signals(Project(root)).pending(signal_type="HOOK_UPDATED")]


def test_create_writes_both_field_sets_and_signals(project: Path, clock: ManualClock) -> None:
    hooks = HookFiles(Project(project, clock))
    hook = hooks.create("orchestrator", "auth", node="impl_auth", bead="bd-12", worktree=project)
    on_disk = json.loads(hook.path.read_text())
    assert hook.path == project / ".claude/state/hooks/orchestrator-auth.json"
    for name in ("hook_id", "role", "name", "phase", "resumption_instructions", "created_at"):
        assert name in on_disk
    for name in ("identity_name", "current_bead", "current_node", "work_phase", "files_modified"):
        assert name in on_disk
    assert on_disk["current_node"] == "impl_auth"
    assert (on_disk["phase"], on_disk["work_phase"]) == ("planning", "investigation")
    assert [s["key"] for s in hook_signals(project)] == ["orchestrator-auth"]


def test_update_keeps_unknown_fields_of_a_harness_hook(project: Path, clock: ManualClock) -> None:
    hooks = HookFiles(Project(project, clock))
    path = hooks.path_for("orchestrator-auth")
    atomic_write_json(path, HARNESS_HOOK)
    hook = hooks.update("orchestrator-auth", work_phase="testing", summary="refresh tokens")
    on_disk = json.loads(path.read_text())
    assert on_disk["harness_only_field"] == {"kept": True}
    assert on_disk["phase"] == "executing"
    assert on_disk["work_phase"] == "testing"
    assert on_disk["work_summary"] == "refresh tokens"
    assert on_disk["last_checkpoint_at"] == on_disk["updated_at"] == "2026-02-26T12:00:00Z"
    assert hook.summary == "refresh tokens"
    assert hook_signals(project)[-1]["work_phase"] == "testing"


def test_every_update_signals(project: Path, clock: ManualClock) -> None:
    hooks = HookFiles(Project(project, clock))
    hooks.update("worker-a", summary="one")
    hooks.update("worker-a", summary="one")
    assert len(hook_signals(project)) == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"phase": "coding"}, "phase 'coding'"),
        ({"work_phase": "executing"}, "work phase 'executing'"),
        ({"bead": "../x"}, "bead id"),
        ({"summary": "x" * 5000}, "longer than"),
    ],
)
def test_bad_values_are_refused_before_writing(
    project: Path, clock: ManualClock, change: dict, message: str
) -> None:
    hooks = HookFiles(Project(project, clock))
    with pytest.raises(InvalidInput, match=message):
        hooks.update("worker-a", **change)
    assert hooks.read("worker-a") is None
    assert hook_signals(project) == []


def test_files_modified_comes_from_git_not_the_caller(project: Path, clock: ManualClock) -> None:
    (project / "tracked.py").write_text("a = 1\n")
    git.run_git(["add", "tracked.py"], project)
    git.run_git(["commit", "-q", "-m", "tracked"], project)
    (project / "tracked.py").write_text("a = 2\n")
    (project / "new_file.py").write_text("b = 1\n")
    hooks = HookFiles(Project(project, clock))
    hooks.create("worker", "a", worktree=project)  # our own state files are not listed
    hook = hooks.update("worker-a", summary="editing", worktree=project)
    assert hook.files_modified == ["new_file.py", "tracked.py"]
    hook = hooks.update("worker-a", summary="no worktree given")
    assert hook.files_modified == ["new_file.py", "tracked.py"]


def test_files_modified_are_every_kind_of_uncommitted_change_named_from_the_top(
    project: Path, tmp_path: Path, clock: ManualClock
) -> None:
    """One ``git status`` of the whole repository: staged, unstaged, deleted, renamed (by its
    new name), untracked anywhere, and names git would quote, as they are."""
    for name in ("kept.py", "gone.py", "old_name.py", "sub/deep.py"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(f"# {name}\n")
    git.run_git(["add", "."], project)
    git.run_git(["commit", "-q", "-m", "files"], project)
    (project / "kept.py").write_text("changed\n")
    (project / "gone.py").unlink()
    git.run_git(["mv", "old_name.py", "new_name.py"], project)
    (project / "staged.py").write_text("new\n")
    git.run_git(["add", "staged.py"], project)
    (project / "sub" / "café draft.py").write_text("untracked\n")
    hooks = HookFiles(Project(project, clock))
    expected = ["gone.py", "kept.py", "new_name.py", "staged.py", "sub/café draft.py"]
    assert hooks.update("worker-a", worktree=project).files_modified == expected
    # Asked from a subdirectory of the worktree: still the whole repository, from its top.
    assert hooks.update("worker-a", worktree=project / "sub").files_modified == expected
    fresh = tmp_path / "fresh"  # a repository without a commit yet has work to lose too
    fresh.mkdir()
    git.run_git(["init", "-q"], fresh)
    (fresh / "first.py").write_text("x\n")
    assert hooks.update("worker-a", worktree=fresh).files_modified == ["first.py"]


def test_unreadable_hook_is_reported_not_overwritten(project: Path, clock: ManualClock) -> None:
    hooks = HookFiles(Project(project, clock))
    path = hooks.path_for("worker-a")
    path.parent.mkdir(parents=True)
    path.write_text('{"phase": ')
    assert hooks.read("worker-a").error.startswith("not valid JSON")
    with pytest.raises(RuneError, match="cannot be updated"):
        hooks.update("worker-a", summary="x")
    assert path.read_text() == '{"phase": '
    assert [h.key for h in hooks.list()] == ["worker-a"]


def test_successor_hook_inherits_work_state(project: Path, clock: ManualClock) -> None:
    hooks = HookFiles(Project(project, clock))
    first = hooks.create("worker", "a", node="n1")
    first = hooks.update("worker-a", work_phase="testing", summary="s", instructions="go on")
    clock.advance(5)
    second = hooks.create("worker", "a", predecessor=first)
    assert second.get("predecessor_hook_id") == first.get("hook_id")
    assert second.get("hook_id") != first.get("hook_id")
    assert (second.work_phase, second.summary) == ("testing", "s")
    assert second.get("resumption_instructions") == "go on"
    assert second.get("current_node") == "n1"


def test_cli_show_and_update(project: Path, cli: Callable) -> None:
    worktree = project / "wt"
    git.init_repo(worktree)
    Registry(Project(project)).register("worker", "parser", worktree=str(worktree))
    (worktree / "parser.py").write_text("x = 1\n")
    result = cli(
        "hook", "update", "worker-parser", "--root", str(project), "--work-phase",
        "implementation", "--phase", "executing", "--summary", "tokenizer", "--bead", "bd-3",
        "--node", "impl_search", "--tests-status", "3 failing", "--instructions", "fix tests",
        "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = result.json()
    assert data["files_modified"] == ["parser.py"]
    assert (data["current_bead"], data["current_node"]) == ("bd-3", "impl_search")
    assert data["tests_status"] == "3 failing"
    shown = cli("hook", "show", "worker-parser", "--root", str(project))
    assert shown.code == 0
    assert "tokenizer" in shown.out and "parser.py" in shown.out
    assert (
        cli("hook", "show", "worker-parser", "--root", str(project), "--json").json()["work_phase"]
        == "implementation"
    )


def test_cli_refuses_bad_phase_and_missing_hook(project: Path, cli: Callable) -> None:
    bad = cli("hook", "update", "worker-x", "--root", str(project), "--phase", "coding")
    assert bad.code == 2
    missing = cli("hook", "show", "worker-x", "--root", str(project))
    assert missing.code == 1
    assert "no hook for 'worker-x'" in missing.err


def test_agent_in_its_worktree_updates_the_project_hook(project: Path, tmp_path: Path) -> None:
    """A spawned agent runs in its own worktree; RUNECONSOLE_ROOT points it at the project."""
    worktree = tmp_path / "wt"
    git.init_repo(worktree)
    Registry(Project(project)).register("worker", "wt", worktree=str(worktree))
    (worktree / "draft.py").write_text("x = 1\n")
    env = {**cli_env(), "RUNECONSOLE_ROOT": str(project)}
    result = subprocess.run(
        [sys.executable, "-m", "runeconsole", "hook", "update", "worker-wt", "--summary", "wt"],
        cwd=worktree, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    hook = HookFiles(Project(project)).get("worker-wt")
    assert (hook.summary, hook.files_modified) == ("wt", ["draft.py"])
    assert not (worktree / ".claude").exists()


WRITER = """
import sys
from pathlib import Path
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.project import Project
hooks = HookFiles(Project(Path(sys.argv[1])))
for i in range(int(sys.argv[3])):
    hooks.update("orchestrator-auth", summary=f"{sys.argv[2]}-{i}", tests_status=str(i))
    print(i, flush=True)
"""


@pytest.mark.e2e
def test_concurrent_writers_and_a_killed_one_never_corrupt_the_hook(project: Path) -> None:
    """Readers only ever see a whole hook, and no writer loses another's fields."""
    hooks = HookFiles(Project(project))
    atomic_write_json(hooks.path_for("orchestrator-auth"), HARNESS_HOOK)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(project), name, "40"],
            env=cli_env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b", "victim")
    ]
    victim = writers[-1]
    assert victim.stdout is not None
    victim.stdout.readline()  # it has written at least once
    victim.kill()
    bad: list[str] = []
    while any(w.poll() is None for w in writers[:-1]):
        hook = hooks.read("orchestrator-auth")
        if hook is None or hook.error:
            bad.append(hook.error if hook else "missing")
    for writer in writers:
        writer.wait(timeout=60)
    assert bad == []
    final = hooks.get("orchestrator-auth")
    assert final.get("harness_only_field") == {"kept": True}
    assert final.get("phase") == "executing"
    assert [w.returncode for w in writers[:-1]] == [0, 0]
    counted = [
        s.payload["work_summary"]
        for s in Signals(Project(project)).pending(signal_type="HOOK_UPDATED")
    ]
    assert {f"a-{i}" for i in range(40)} | {f"b-{i}" for i in range(40)} <= set(counted)
    assert [hook.key for hook in hooks.list()] == ["orchestrator-auth"]  # temp files skipped


def test_each_write_says_who_made_it_and_only_the_agent_counts(
    project: Path, clock: ManualClock
) -> None:
    from runeconsole.services.hook_files import MONITOR, SUPERVISOR, agent_wrote

    hooks = HookFiles(Project(project, clock))
    start = hooks.create("worker", "a").fields
    assert (start["updated_by"], start["agent_updates"]) == (SUPERVISOR, 0)
    by_monitor = hooks.update("worker-a", work_phase="testing", writer=MONITOR)
    assert by_monitor.get("updated_by") == MONITOR and not agent_wrote(start, by_monitor)
    by_agent = hooks.update("worker-a", work_phase="testing")
    assert (by_agent.get("updated_by"), by_agent.get("agent_updates")) == ("agent", 1)
    assert agent_wrote(start, by_agent)
    hooks.update("worker-a", work_phase="planning", writer=MONITOR)  # after the agent's save
    assert agent_wrote(start, hooks.read("worker-a"))
    # A harness script that keeps our fields but knows nothing of them: its summary shows.
    harness = {**by_monitor.fields, "work_summary": "saved by the harness"}
    atomic_write_json(hooks.path_for("worker-a"), harness)
    assert agent_wrote(by_monitor.fields, hooks.read("worker-a"))


def test_a_new_hook_keeps_the_one_it_replaces(project: Path, clock: ManualClock) -> None:
    hooks = HookFiles(Project(project, clock))
    first = hooks.create("worker", "a")
    hooks.update("worker-a", instructions="resume at step 3", summary="half the parser")
    clock.advance(5)
    second = hooks.create("worker", "a")
    assert second.get("resumption_instructions") is None  # a fresh start
    archived = hooks.archived(first.get("hook_id"))
    kept = json.loads(archived.read_text())
    assert (kept["resumption_instructions"], kept["work_summary"]) == (
        "resume at step 3",
        "half the parser",
    )
    assert [hook.key for hook in hooks.list()] == ["worker-a"]  # history is not a hook


def test_hooks_are_never_written_through_a_link_out_of_the_root(
    project: Path, clock: ManualClock, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    hooks = HookFiles(Project(project, clock))
    hooks.paths.hook_files.parent.mkdir(parents=True)
    hooks.paths.hook_files.symlink_to(outside, target_is_directory=True)
    with pytest.raises(RuneError, match="leads outside the project root"):
        hooks.create("orchestrator", "auth", worktree=project)
    assert list(outside.iterdir()) == []
