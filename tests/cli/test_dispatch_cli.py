"""``runeconsole new``, ``task list|show|compare|test|pick|drop`` and ``worktrees [clean]``:
what they print, their exit codes, every refusal with nothing half-made left, and a picked
attempt landing through ``runeconsole merge-queue process`` with its worktree removed (or
kept, as the talisman says). Real git, tmux on a private server, Claude Code played by a
stand-in through ``$RUNECONSOLE_CLAUDE``."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.claude_cli import COMMAND_ENV
from runeconsole.adapters.tmux import Tmux
from tests.services.dispatch.helpers import (
    branches,
    commit_in,
    identity,
    install_stand_in,
    project_excluding_state,
    stand_in_args,
    status,
    task_file,
    worktree_paths,
    write_talisman,
)
from tests.support.cli import CliResult
from tests.support.merge_queue import git
from tests.support.polling import wait_until

QUEUE = "test_command: 'true'\nbatch_max: 1\nparallel_runs: 1\nflaky_retries: 0"


@pytest.fixture
def root(project: Path) -> Path:
    return project_excluding_state(project)


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install_stand_in(tmp_path, monkeypatch)


@pytest.fixture
def rc(cli: Callable[..., CliResult], root: Path, stand_in: Path) -> Callable[..., CliResult]:
    """``runeconsole ARGS --root ROOT`` in-process."""
    return lambda *args: cli(*args, "--root", str(root))


@pytest.fixture
def on_tmux(rc: Callable[..., CliResult], tmux_socket: str) -> Callable[..., CliResult]:
    """``runeconsole ARGS --root ROOT --tmux-socket PRIVATE``."""
    return lambda *args: rc(*args, "--tmux-socket", tmux_socket)


def nothing_made(root: Path) -> bool:
    tasks = root / ".claude" / "state" / "tasks"
    return (
        worktree_paths(root) == {root}
        and branches(root) == {"main"}
        and not (tasks.exists() and any(tasks.iterdir()))
        and not (root / ".claude" / "worktrees").exists()
        and status(root) == []
    )


# -- new ----------------------------------------------------------------------------------------


def test_new_with_count_three_prints_each_attempt_and_lists_the_task(
    root: Path, on_tmux: Callable[..., CliResult], tmux_socket: str, stand_in: Path
) -> None:
    made = on_tmux("new", "--task", "Fix the login timeout", "--count", "3")

    assert made.code == 0, made.err
    lines = made.out.splitlines()
    assert lines[0] == "task fix-login-timeout: working"
    for n, line in enumerate(lines[1:], 1):
        name = f"fix-login-timeout-{n}"
        where = root / ".claude" / "worktrees" / name
        assert line.split() == [
            str(n), "started", f"worker-{name}", "on", f"agent/worker-{name}", "in", str(where),
        ]  # fmt: skip
        assert Tmux(tmux_socket).has_session(f"rune-worker-{name}")
        args = wait_until(lambda name=name: stand_in_args(stand_in, f"worker-{name}"))
        assert args == ["Fix the login timeout"]
    assert status(root) == []

    listed = on_tmux("task", "list")
    assert listed.code == 0
    assert listed.out.split("\n")[1].split() == [
        "fix-login-timeout", "working", "3", "-", "Fix", "the", "login", "timeout",
    ]  # fmt: skip
    shown = on_tmux("task", "show", "fix-login-timeout", "--json").json()
    assert [a["branch"] for a in shown["attempts"]] == [
        f"agent/worker-fix-login-timeout-{n}" for n in (1, 2, 3)
    ]


def test_new_from_a_task_file_with_json_and_options(
    root: Path, on_tmux: Callable[..., CliResult], tmp_path: Path
) -> None:
    text = tmp_path / "task.md"
    text.write_text("Rewrite the tokenizer\n\nKeep the API.\n")

    made = on_tmux(
        "new", "--task-file", str(text), "--name", "tok", "--model", "opus",
        "--permission-mode", "acceptEdits", "--node-id", "impl_tok", "--json",
    )  # fmt: skip

    assert made.code == 0, made.err
    body = made.json()
    assert (body["task_id"], body["state"], body["text"]) == (
        "tok",
        "working",
        "Rewrite the tokenizer\n\nKeep the API.",
    )
    record = task_file(root, "tok")
    assert (record["model"], record["permission_mode"]) == ("opus", "acceptEdits")
    agent = identity(root, "worker-tok")
    assert agent["node_id"] == "impl_tok"
    assert agent["metadata"]["command"][1:] == [
        "--model", "opus", "--permission-mode", "acceptEdits", record["text"],
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (("--base", "no-such-ref"), 1, "base 'no-such-ref' names no commit"),
        (("--name", "../escape"), 2, "name '../escape' is not allowed"),
        (("--name", "has space"), 2, "is not allowed"),
        (("--count", "0"), 2, "--count must be from 1 to 16"),
        (("--count", "17"), 2, "--count must be from 1 to 16"),
        (("--role", "a/b"), 2, "role 'a/b' is not allowed"),
        (("--permission-mode", "yolo"), 2, "--permission-mode 'yolo': one of"),
        (("--model", "opus;"), 2, "--model 'opus;' is not a model name"),
        (("--model=-x",), 2, "--model '-x' is not a model name"),
        (("--base=-all",), 2, "--base '-all' is not a ref"),
    ],
)
def test_new_refuses_bad_input_and_makes_nothing(
    root: Path, rc: Callable[..., CliResult], args: tuple[str, ...], code: int, said: str
) -> None:
    refused = rc("new", "--task", "Fix the login timeout", *args)

    assert refused.code == code, refused.err
    assert said in refused.err
    assert nothing_made(root)


def test_new_refuses_an_empty_task_and_a_task_file_that_is_not_there(
    root: Path, rc: Callable[..., CliResult], tmp_path: Path
) -> None:
    empty = rc("new", "--task", "  \n ")
    assert empty.code == 2 and "the task is empty" in empty.err
    missing = rc("new", "--task-file", str(tmp_path / "nope.md"))
    assert missing.code == 2 and f"--task-file {tmp_path / 'nope.md'}" in missing.err
    assert nothing_made(root)


def test_new_refuses_a_branch_or_a_worktree_already_there_and_makes_nothing_of_the_others(
    root: Path, rc: Callable[..., CliResult]
) -> None:
    git(root, "branch", "agent/worker-taken-2")
    taken = rc("new", "--task", "x", "--name", "taken", "--count", "3")
    assert taken.code == 1
    assert "branch agent/worker-taken-2 already exists; give another --name" in taken.err
    git(root, "branch", "-D", "agent/worker-taken-2")
    assert nothing_made(root)

    there = root / ".claude" / "worktrees" / "there"
    there.mkdir(parents=True)
    refused = rc("new", "--task", "x", "--name", "there")
    assert refused.code == 1
    assert f"{there} already exists; give another --name" in refused.err
    assert list(there.iterdir()) == [] and worktree_paths(root) == {root}
    assert branches(root) == {"main"}


def test_new_says_how_to_install_claude_code_when_it_is_missing(
    root: Path, rc: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(COMMAND_ENV, str(tmp_path / "nowhere" / "claude"))

    refused = rc("new", "--task", "Fix the login timeout")

    assert refused.code == 1
    assert f"Claude Code ('{tmp_path / 'nowhere' / 'claude'}') is not installed" in refused.err
    assert "npm install -g @anthropic-ai/claude-code" in refused.err
    assert nothing_made(root)


def test_new_says_how_to_go_on_when_tmux_is_missing(
    root: Path, rc: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bare = tmp_path / "bare-bin"  # git and nothing else
    bare.mkdir()
    (bare / "git").symlink_to(str(shutil.which("git")))
    monkeypatch.setenv("PATH", str(bare))

    refused = rc("new", "--task", "Fix the login timeout")

    assert refused.code == 1
    assert "tmux is not installed: install it (apt install tmux)" in refused.err
    assert "--background" in refused.err
    assert nothing_made(root)


def test_a_bad_copy_glob_in_the_talisman_is_refused_naming_the_setting(
    root: Path, rc: Callable[..., CliResult]
) -> None:
    write_talisman(root, 'copy: ["../secrets/.env"]')

    refused = rc("new", "--task", "Fix the login timeout")

    assert refused.code != 0
    assert "runeconsole.worktrees.copy names '../secrets/.env'" in refused.err
    assert not (root / ".claude" / "worktrees").exists()


def test_new_whose_setup_fails_exits_1_naming_the_log(
    root: Path, on_tmux: Callable[..., CliResult], tmux_socket: str
) -> None:
    write_talisman(root, "setup_command: sh -c 'echo no network; exit 7'")

    made = on_tmux("new", "--task", "Fix the login timeout", "--name", "net")

    assert made.code == 1
    log = root / ".claude" / "state" / "tasks" / "net" / "attempt-1-setup.log"
    assert "task net: dropped" in made.out
    assert "setup_failed" in made.out and f"(output: {log})" in made.out
    assert log.read_text() == "no network\n"
    assert not Tmux(tmux_socket).has_session("rune-worker-net")


# -- task ---------------------------------------------------------------------------------------


def test_task_list_shows_an_unreadable_task_with_the_reason(
    root: Path, rc: Callable[..., CliResult]
) -> None:
    tasks = root / ".claude" / "state" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "torn.json").write_text('{"text": "cut sh')

    listed = rc("task", "list")

    assert listed.code == 0, listed.err
    [_, row] = listed.out.strip().splitlines()
    assert row.split()[:2] == ["torn", "unreadable"]
    [entry] = rc("task", "list", "--json").json()
    assert entry["state"] == "unreadable" and entry["error"] and entry["error"] in row
    shown = rc("task", "show", "torn")
    assert shown.code == 1 and "task torn is unreadable" in shown.err


def test_no_tasks_says_how_to_start_one(root: Path, rc: Callable[..., CliResult]) -> None:
    listed = rc("task", "list")
    assert (listed.code, listed.out.strip()) == (
        0,
        "no tasks (`runeconsole new --task TEXT` starts one)",
    )


def test_compare_and_test_print_each_attempt_and_test_exits_1_when_one_fails(
    root: Path, on_tmux: Callable[..., CliResult]
) -> None:
    write_talisman(root, merge_queue="test_command: test -f fixed.txt")
    assert on_tmux("new", "--task", "Fix it", "--name", "fix", "--count", "2").code == 0
    trees = root / ".claude" / "worktrees"
    commit_in(trees / "fix-1", {"fixed.txt": "1\n2\n3\n"}, "fixed")
    commit_in(trees / "fix-2", {"a.txt": "A\n"}, "not fixed")

    tested = on_tmux("task", "test", "fix")

    assert tested.code == 1
    first, second = tested.out.splitlines()
    assert "`test -f fixed.txt` passed" in first
    assert "`test -f fixed.txt` failed with exit 1" in second
    assert on_tmux("task", "test", "fix", "1").code == 0
    compared = on_tmux("task", "compare", "fix")
    assert compared.code == 0
    rows = [line.split() for line in compared.out.splitlines()[1:]]
    assert [row[4:7] for row in rows] == [["+3", "-0", "1"], ["+1", "-1", "1"]]
    assert [row[7] for row in rows] == ["pass", "FAIL"]
    views = on_tmux("task", "compare", "fix", "--json").json()
    assert [(v["added"], v["removed"], v["files"]) for v in views] == [
        (3, 0, ["fixed.txt"]),
        (1, 1, ["a.txt"]),
    ]


def test_pick_refuses_to_lose_commits_without_consent_then_queues_and_removes_the_rest(
    root: Path, on_tmux: Callable[..., CliResult], rc: Callable[..., CliResult], tmux_socket: str
) -> None:
    assert on_tmux("new", "--task", "Fix it", "--name", "fix", "--count", "2").code == 0
    trees = root / ".claude" / "worktrees"
    commit_in(trees / "fix-1", {"fixed.txt": "yes\n"}, "the fix")
    commit_in(trees / "fix-2", {"other.txt": "no\n"}, "another try")

    refused = on_tmux("task", "pick", "fix", "1")
    assert refused.code == 1
    assert "worker-fix-2: 1 (" in refused.err and "another try" in refused.err
    assert "--discard-commits" in refused.err

    picked = on_tmux("task", "pick", "fix", "1", "--discard-commits")

    assert picked.code == 0, picked.err
    first, removed = picked.out.splitlines()
    assert first.startswith("picked attempt 1 of fix: queued as mq-")
    assert removed.strip() == f"removed {trees / 'fix-2'} and branch agent/worker-fix-2"
    assert not Tmux(tmux_socket).has_session("rune-worker-fix-2")
    queued = rc("merge-queue", "list", "--json").json()["entries"]
    assert [e["branch"] for e in queued] == ["agent/worker-fix-1"]
    states = {row["path"]: row["state"] for row in on_tmux("worktrees", "--json").json()}
    assert states == {str(root): "main", str(trees / "fix-1"): "queued"}


def test_drop_prints_what_went_and_what_stayed(
    root: Path, on_tmux: Callable[..., CliResult]
) -> None:
    assert on_tmux("new", "--task", "Try it", "--name", "try", "--count", "2").code == 0
    trees = root / ".claude" / "worktrees"
    (trees / "try-2" / "draft.txt").write_text("draft\n")

    dropped = on_tmux("task", "drop", "try")

    assert dropped.code == 0, dropped.err
    assert dropped.out.splitlines() == [
        "dropped try",
        f"  removed {trees / 'try-1'} and branch agent/worker-try-1",
        f"  kept {trees / 'try-2'}: 1 uncommitted or untracked file(s): draft.txt",
    ]
    (trees / "try-2" / "draft.txt").unlink()
    dry = on_tmux("worktrees", "clean", "--dry-run")
    assert dry.out.strip() == f"would remove {trees / 'try-2'} and branch agent/worker-try-2"
    assert (trees / "try-2").is_dir()
    assert on_tmux("worktrees", "clean").out.strip() == (
        f"removed {trees / 'try-2'} and branch agent/worker-try-2"
    )
    assert on_tmux("worktrees", "clean").out.strip() == (
        "nothing to clean: no landed or dropped worktrees"
    )
    assert worktree_paths(root) == {root} and branches(root) == {"main"}


# -- worktrees and landing ---------------------------------------------------------------------


def test_worktrees_lists_one_made_by_hand_as_an_orphan(
    root: Path, rc: Callable[..., CliResult]
) -> None:
    hand = root.parent / "by-hand"
    git(root, "worktree", "add", "--quiet", "-b", "experiment", str(hand))
    (hand / "scratch.txt").write_text("x\n")

    rows = rc("worktrees", "--json").json()

    assert [(r["path"], r["state"]) for r in rows] == [(str(root), "main"), (str(hand), "orphan")]
    orphan = rows[1]
    assert (orphan["branch"], orphan["agent"], orphan["task"]) == ("experiment", None, None)
    assert orphan["dirty"] == ["scratch.txt"] and orphan["size_bytes"] > 0
    table = rc("worktrees").out.splitlines()
    assert table[2].split()[:6] == ["orphan", str(hand), "experiment", "-", "-", "1"]


@pytest.mark.parametrize("case", ["removed", "kept by the talisman", "kept for a file"])
def test_a_picked_attempt_that_lands_has_its_worktree_and_branch_removed_unless_kept(
    root: Path,
    on_tmux: Callable[..., CliResult],
    rc: Callable[..., CliResult],
    tmux_socket: str,
    case: str,
) -> None:
    worktrees = "remove_after_land: false" if case == "kept by the talisman" else ""
    write_talisman(root, worktrees, merge_queue=QUEUE)
    assert on_tmux("new", "--task", "Land it", "--name", "land").code == 0
    path = root / ".claude" / "worktrees" / "land"
    commit_in(path, {"landed.txt": "here\n"}, "the change")
    assert on_tmux("task", "pick", "land", "1").code == 0
    if case == "kept for a file":
        (path / "scratch.txt").write_text("not committed\n")

    processed = rc("merge-queue", "process")

    assert processed.code == 0, processed.err
    assert "merged agent/worker-land" in processed.out
    assert "landed.txt" in git(root, "ls-tree", "-r", "--name-only", "main").split()
    assert task_file(root, "land")["state"] == "landed"
    if case == "removed":
        assert f"worktree: removed {path} and branch agent/worker-land" in processed.out
        assert worktree_paths(root) == {root} and branches(root) == {"main"}
        assert not Tmux(tmux_socket).has_session("rune-worker-land")
        return
    if case == "kept for a file":
        assert (
            f"worktree: kept {path}: 1 uncommitted or untracked file(s): scratch.txt"
            in processed.out
        )
    else:
        assert "worktree:" not in processed.out
    assert path in worktree_paths(root) and "agent/worker-land" in branches(root)
    [row] = [r for r in rc("worktrees", "--json").json() if r["path"] == str(path)]
    assert row["state"] == "landed"
