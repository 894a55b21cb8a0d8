"""``new``: a task's attempts made in fresh worktrees with real git and started on a private
tmux server (Claude Code played by a stand-in): branches, worktrees, the files copied, the
hooks, the setup command, and names."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from runeconsole.adapters.tmux import Tmux
from runeconsole.services.claude.install.install import installed, plan_install
from runeconsole.services.dispatch import worktree_prep as prep
from runeconsole.services.dispatch.creation import NewTask, suggest_name
from runeconsole.services.dispatch.service import Dispatch
from tests.services.dispatch.helpers import (
    branches,
    commit_in,
    identity,
    stand_in_args,
    status,
    task_file,
    worktree_paths,
    write_talisman,
)
from tests.support.claude import install
from tests.support.merge_queue import git, rev
from tests.support.polling import wait_until

TASK = 'Fix the login timeout in the parser\nkeep "quotes", $HOME and `ticks` as they are'


def test_three_attempts_are_three_branches_from_the_base_in_worktrees_git_status_does_not_see(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str, stand_in: Path
) -> None:
    git(root, "branch", "release")
    commit_in(root, {"main.txt": "m\n"}, "on main after release branched")
    git(root, "checkout", "--quiet", "release")
    release = commit_in(root, {"r.txt": "release only\n"}, "release fix")
    git(root, "checkout", "--quiet", "main")

    task = dispatch().new(NewTask(TASK, count=3, base="release"))

    assert (task.task_id, task.state) == ("fix-login-timeout-parser", "working")
    names = [f"fix-login-timeout-parser-{n}" for n in (1, 2, 3)]
    assert {f"agent/worker-{name}" for name in names} <= branches(root)
    made = [root / ".claude" / "worktrees" / name for name in names]
    assert set(made) <= worktree_paths(root)
    for name, path in zip(names, made, strict=True):
        assert rev(root, f"agent/worker-{name}") == release
        assert git(path, "branch", "--show-current") == f"agent/worker-{name}"
        assert (path / "r.txt").read_text() == "release only\n"
        record = identity(root, f"worker-{name}")
        assert record["worktree"] == str(path)
        assert record["metadata"]["task_id"] == task.task_id
        assert record["status"] == "active"
        assert Tmux(tmux_socket).has_session(f"rune-worker-{name}")
        assert record["metadata"]["command"][-1] == TASK.strip()
        args = wait_until(lambda name=name: stand_in_args(stand_in, f"worker-{name}"))
        assert args[-1] == TASK.strip()
    assert status(root) == []
    assert [a["state"] for a in task_file(root, task.task_id)["attempts"]] == ["started"] * 3


def test_one_attempt_takes_the_name_itself_from_the_main_branch(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    task = dispatch().new(NewTask("Tidy up the docs", name="docs"))

    [attempt] = task.attempts
    assert (attempt.agent, attempt.branch) == ("worker-docs", "agent/worker-docs")
    assert attempt.worktree == root / ".claude" / "worktrees" / "docs"
    assert rev(root, "agent/worker-docs") == rev(root, "main")
    assert task.get("base") == "main"


def test_a_suggested_name_is_unique_against_tasks_branches_and_worktrees(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    git(root, "branch", "agent/worker-fix-login-timeout")
    made = dispatch()

    assert made.suggest("Fix the login timeout") == "fix-login-timeout-2"
    first = made.new(NewTask("Fix the login timeout"))
    assert first.task_id == "fix-login-timeout-2"
    (root / ".claude" / "worktrees" / "fix-login-timeout-3").mkdir()
    assert dispatch().suggest("Fix the login timeout") == "fix-login-timeout-4"


def test_a_suggested_name_leaves_room_for_every_attempt_of_the_count(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    git(root, "branch", "agent/worker-fix-login-timeout-2")  # an attempt kept from before

    task = dispatch().new(NewTask("Fix the login timeout", count=2))

    assert task.state == "working"
    assert task.task_id != "fix-login-timeout"
    assert {a.branch for a in task.attempts}.isdisjoint({"agent/worker-fix-login-timeout-2"})


def test_a_name_is_suggested_from_the_tasks_first_words_without_the_small_ones() -> None:
    assert suggest_name("Please make the parser handle tabs and CRLF line ends") == (
        "parser-handle-tabs-crlf"
    )
    assert suggest_name("!!!") == "task"
    assert suggest_name("Fix it", {"fix", "fix-2"}) == "fix-3"
    assert suggest_name("\nFix the login timeout\nsrc/login.py gives up") == "fix-login-timeout"


def test_copy_globs_copy_untracked_files_but_no_links_nor_anything_outside_the_root(
    root: Path, dispatch: Callable[[], Dispatch], tmp_path: Path
) -> None:
    write_talisman(root, 'copy: [".env*", "config/*.local.yml", "linked/*", "a.txt"]')
    (root / ".env").write_text("SECRET=1\n")
    (root / ".env").chmod(0o600)
    (root / "config").mkdir()
    (root / "config" / "app.local.yml").write_text("debug: true\n")
    (root / ".env.link").symlink_to(root / ".env")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("not the project's\n")
    (root / "linked").symlink_to(outside)
    (root / "a.txt").write_text("changed in the main checkout, not committed\n")

    task = dispatch().new(NewTask("Use the local settings", name="local"))

    worktree = root / ".claude" / "worktrees" / "local"
    assert (worktree / ".env").read_text() == "SECRET=1\n"
    assert (worktree / ".env").stat().st_mode & 0o777 == 0o600
    assert (worktree / "config" / "app.local.yml").read_text() == "debug: true\n"
    assert not (worktree / ".env.link").exists() and not (worktree / ".env.link").is_symlink()
    assert not (worktree / "linked").exists()
    assert (worktree / "a.txt").read_text() == "a\n"  # a checked-out file is never replaced
    placed = task.attempts[0].get("placed")
    assert set(placed) == {".env", "config/app.local.yml"}


def test_hooks_installed_locally_in_the_root_are_active_in_each_new_worktree_which_stays_clean(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    assert install(root).returncode == 0  # `runeconsole claude install`: the local scope
    ours = installed(_json(root / ".claude" / "settings.local.json"))
    assert ours

    task = dispatch().new(NewTask("Count the words", name="words", count=2))

    for attempt in task.attempts:
        worktree = attempt.worktree
        assert worktree is not None
        assert installed(_json(worktree / ".claude" / "settings.local.json")) == ours
        assert status(worktree) == []
    assert status(root) == []


def test_hooks_in_an_uncommitted_project_settings_file_reach_the_worktree_as_local_ones(
    root: Path, tmp_path: Path
) -> None:
    plan_install(root / ".claude" / "settings.json").apply()
    worktree = tmp_path / "checkout"
    worktree.mkdir()

    placed = prep.install_hooks(root, worktree)

    local = worktree / ".claude" / "settings.local.json"
    assert installed(_json(local)) == installed(_json(root / ".claude" / "settings.json"))
    assert placed == {".claude/settings.local.json": prep.digest(local)}


def test_a_project_without_our_hooks_gives_the_worktree_none(root: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "checkout"
    worktree.mkdir()
    assert prep.install_hooks(root, worktree) == {}
    assert not (worktree / ".claude").exists()


def test_the_setup_commands_output_is_kept_in_the_attempts_log(
    root: Path, dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    write_talisman(root, "setup_command: sh -c 'echo installing in $PWD; echo a warning >&2'")

    task = dispatch().new(NewTask("Add a cache", name="cache"))

    [attempt] = task.attempts
    setup = attempt.get("setup")
    assert setup["ok"] is True and setup["exit"] == 0
    log = Path(setup["output"])
    assert log == root / ".claude" / "state" / "tasks" / "cache" / "attempt-1-setup.log"
    worktree = root / ".claude" / "worktrees" / "cache"
    assert log.read_text() == f"installing in {worktree}\na warning\n"
    assert attempt.state == "started"
    wait_until(lambda: stand_in_args(stand_in, "worker-cache"))


def test_a_failing_setup_starts_no_agent_and_its_error_names_the_log(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str, stand_in: Path
) -> None:
    write_talisman(root, "setup_command: sh -c 'echo lockfile out of date; exit 3'")

    task = dispatch().new(NewTask("Add a cache", name="cache", count=2))

    log = root / ".claude" / "state" / "tasks" / "cache" / "attempt-1-setup.log"
    assert log.read_text() == "lockfile out of date\n"
    first = task.attempt(1)
    assert first.state == "setup_failed"
    assert f"output: {log}" in first.get("error")
    assert "failed with exit 3" in first.get("error")
    assert task.state == "dropped"  # no attempt started
    assert not Tmux(tmux_socket).has_session("rune-worker-cache-1")
    assert stand_in_args(stand_in, "worker-cache-1") is None
    record = identity(root, "worker-cache-1")  # a problem row, not a running agent
    assert record["status"] != "active"
    assert record["metadata"]["task_id"] == "cache"


def test_a_hanging_setup_is_killed_at_its_timeout(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str, tmp_path: Path
) -> None:
    marker = tmp_path / "setup-pid"
    write_talisman(
        root,
        f"setup_command: sh -c 'echo $$ > {marker}; exec sleep 60'\nsetup_timeout_seconds: 1",
    )

    started = time.monotonic()
    task = dispatch().new(NewTask("Add a cache", name="cache"))

    assert time.monotonic() - started < 15
    [attempt] = task.attempts
    assert attempt.state == "setup_failed"
    assert "timed out after 1s (runeconsole.worktrees.setup_timeout_seconds); killed" in (
        attempt.get("error")
    )
    pid = int(marker.read_text())
    wait_until(lambda: not _alive(pid), what="the setup command to be gone")
    assert not Tmux(tmux_socket).has_session("rune-worker-cache")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status_file = Path(f"/proc/{pid}/stat")
    return not (status_file.exists() and status_file.read_text().split()[2] == "Z")


def _json(path: Path) -> dict:
    loaded = json.loads(path.read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_a_recursive_copy_glob_takes_nothing_from_the_other_attempts_worktrees(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    write_talisman(root, 'dir: attempts\ncopy: ["**/.env"]')
    (root / ".env").write_text("SECRET=1\n")

    task = dispatch().new(NewTask("Use the local settings", name="local", count=2))

    found = sorted(str(p.relative_to(root)) for p in (root / "attempts").rglob(".env"))
    assert found == ["attempts/local-1/.env", "attempts/local-2/.env"]
    assert task.attempt(2).get("placed") == {".env": prep.digest(root / ".env")}
    assert status(root) == ["?? .env"]


def test_a_task_ending_with_a_semicolon_reaches_claude_code_whole(
    root: Path, dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    dispatch().new(NewTask("Fix the parser; then the lexer;", name="semi"))
    args = wait_until(lambda: stand_in_args(stand_in, "worker-semi"))
    assert args[-1] == "Fix the parser; then the lexer;"
