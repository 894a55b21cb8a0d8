"""``resume`` and ``fork``: an agent's Claude Code session continued by a new supervised
agent on a private tmux server (Claude Code played by a stand-in that records its
arguments): the predecessor, the session ids, the worktree, and what a failure undoes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.dispatch.continuing import Continuing, carried_options
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.service import Dispatch
from tests.services.dispatch.helpers import (
    branches,
    commit_in,
    identity,
    stand_in_args,
    task_file,
    worktree_paths,
)
from tests.support.merge_queue import rev
from tests.support.polling import wait_until

SESSION = "0630e3b6-ad49-4600-90a2-d7573e8f8f23"
ENTRY = "b618fbe7-55fe-46ff-ba85-4a0d47662890"


def started_agent(
    dispatch: Dispatch, stand_in: Path, name: str = "tidy", session: str = SESSION
) -> tuple[str, Path]:
    """An agent made by ``new`` (its worktree, its branch), whose hooks reported ``session``
    and a transcript; returns its key and worktree."""
    task = dispatch.new(NewTask(f"tidy the {name} module", name=name, permission_mode="plan"))
    key = task.attempts[0].agent
    wait_until(lambda: stand_in_args(stand_in, key) is not None, 10, what=key)
    worktree = Path(str(task.attempts[0].worktree))
    transcript = worktree.parent.parent / f"{session}.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "uuid": ENTRY}, separators=(",", ":")))
    claude = {"session_id": session, "transcript_path": str(transcript)}
    dispatch.supervisor.registry.update(key, {"session_id": session, "claude": claude})
    return key, worktree


def ended_agent(dispatch: Dispatch, stand_in: Path, name: str = "tidy") -> tuple[str, Path]:
    key, worktree = started_agent(dispatch, stand_in, name)
    dispatch.supervisor.kill(key)
    return key, worktree


def test_resume_runs_claude_resume_in_the_worktree_as_a_successor_of_the_ended_agent(
    dispatch: Callable[[], Dispatch], stand_in: Path, tmux_socket: str
) -> None:
    made = dispatch()
    key, worktree = ended_agent(made, stand_in)
    ended = identity(made.root, key)
    (stand_in.parent / f"args-{key}").unlink()

    result = Continuing(dispatch()).resume(key)

    assert (result.key, result.session_id, result.from_session) == (key, SESSION, SESSION)
    wait_until(lambda: stand_in_args(stand_in, key) is not None, 10, what=key)
    assert stand_in_args(stand_in, key) == ["--resume", SESSION, "--permission-mode", "plan"]
    now = identity(made.root, key)
    assert now["status"] == "active" and now["agent_id"] != ended["agent_id"]
    assert now["predecessor_id"] == ended["agent_id"] == result.source_agent_id
    assert now["worktree"] == str(worktree) and now["session_id"] == SESSION
    assert now["metadata"]["resumed"] == {"agent_id": ended["agent_id"], "session_id": SESSION}
    assert now["metadata"]["task_id"] == "tidy"
    assert Tmux(tmux_socket).has_session(f"rune-{key}")
    chain = [r.get("agent_id") for r in made.supervisor.registry.chain(key)]
    assert chain[:2] == [now["agent_id"], ended["agent_id"]]


def test_a_live_agent_is_refused_and_nothing_is_started(
    dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    made = dispatch()
    key, _ = started_agent(made, stand_in)
    before = identity(made.root, key)

    with pytest.raises(RuneError, match=r"still running .* kill it first .* fork it"):
        Continuing(dispatch()).resume(key)

    assert identity(made.root, key) == before


def test_a_resume_whose_conversation_is_gone_is_refused_saying_so(
    dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    made = dispatch()
    key, worktree = ended_agent(made, stand_in)
    (worktree.parent.parent / f"{SESSION}.jsonl").unlink()

    with pytest.raises(RuneError, match=r"conversation .* is gone"):
        Continuing(dispatch()).resume(key)
    assert identity(made.root, key)["status"] == "terminated"


def test_a_session_id_that_is_no_uuid_is_refused_before_any_argument_is_built(
    dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    made = dispatch()
    key, _ = ended_agent(made, stand_in)
    made.supervisor.registry.update(key, {"session_id": "../../etc --dangerously"})

    with pytest.raises(InvalidInput, match="is not a UUID"):
        Continuing(dispatch()).resume(key)
    with pytest.raises(InvalidInput, match="is not a UUID"):
        Continuing(dispatch()).fork(key)
    with pytest.raises(InvalidInput, match="--at 'x' is not a UUID"):
        Continuing(dispatch()).fork(key, at="x")


def test_fork_starts_a_new_agent_in_the_same_worktree_on_a_new_session_id(
    dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    made = dispatch()
    key, worktree = started_agent(made, stand_in)  # a live agent may be forked

    result = Continuing(dispatch()).fork(key)

    assert result.key == "worker-tidy-fork" and result.from_session == SESSION
    assert result.session_id != SESSION and len(result.session_id) == 36
    wait_until(lambda: stand_in_args(stand_in, result.key) is not None, 10, what=result.key)
    assert stand_in_args(stand_in, result.key) == [
        "--resume", SESSION, "--fork-session", "--session-id", result.session_id,
        "--permission-mode", "plan",
    ]  # fmt: skip
    fork = identity(made.root, result.key)
    assert fork["worktree"] == str(worktree) and fork["session_id"] == result.session_id
    assert fork["predecessor_id"] is None
    assert fork["metadata"]["forked_from"]["agent"] == key
    # a respawn of the fork continues its own session, never forks again
    assert fork["metadata"]["command"][1:3] == ["--resume", result.session_id]
    assert identity(made.root, key)["status"] == "active"

    second = Continuing(dispatch()).fork(key)
    assert second.key == "worker-tidy-fork-2"


def test_fork_into_a_new_worktree_branches_from_the_commit_the_agent_has_checked_out(
    dispatch: Callable[[], Dispatch], stand_in: Path, root: Path
) -> None:
    made = dispatch()
    key, worktree = ended_agent(made, stand_in)
    head = commit_in(worktree, {"tidy.txt": "tidied\n"}, "the agent's commit")
    commit_in(root, {"main.txt": "later\n"}, "main moves on")

    result = Continuing(dispatch()).fork(key, name="second-try", new_worktree=True)

    place = root / ".claude" / "worktrees" / "second-try"
    assert (result.worktree, result.branch) == (str(place), "agent/worker-second-try")
    assert place in worktree_paths(root) and rev(root, "agent/worker-second-try") == head
    assert (place / "tidy.txt").read_text() == "tidied\n"
    wait_until(lambda: stand_in_args(stand_in, result.key) is not None, 10, what=result.key)
    assert stand_in_args(stand_in, result.key)[:3] == ["--resume", SESSION, "--fork-session"]
    assert task_file(root, "second-try")["state"] == "working"
    assert identity(root, result.key)["metadata"]["task_id"] == "second-try"


def test_a_fork_whose_start_fails_undoes_its_worktree_and_branch(
    dispatch: Callable[[], Dispatch], stand_in: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = dispatch()
    key, _ = ended_agent(made, stand_in)
    before_branches, before_worktrees = branches(root), worktree_paths(root)
    failing = dispatch()

    def refuse(*_: object, **__: object) -> None:
        raise RuneError("tmux said no")

    monkeypatch.setattr(failing.supervisor, "spawn", refuse)
    with pytest.raises(RuneError, match=r"fork of worker-tidy: .*tmux said no.*undone"):
        Continuing(failing).fork(key, name="doomed", new_worktree=True)

    assert branches(root) == before_branches and worktree_paths(root) == before_worktrees
    assert not (root / ".claude" / "worktrees" / "doomed").exists()
    attempt = task_file(root, "doomed")["attempts"][0]
    assert attempt["state"] == "removed"


def test_fork_at_an_entry_the_conversation_does_not_hold_is_refused(
    dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    made = dispatch()
    key, _ = ended_agent(made, stand_in)
    other = "11111111-2222-3333-4444-555555555555"

    with pytest.raises(InvalidInput, match=f"--at {other}: no entry of that uuid"):
        Continuing(dispatch()).fork(key, at=other)
    assert not made.supervisor.registry.path_for("worker-tidy-fork").exists()


def test_an_agent_that_never_reported_a_session_cannot_be_resumed(
    dispatch: Callable[[], Dispatch], stand_in: Path
) -> None:
    made = dispatch()
    task = made.new(NewTask("tidy", name="quiet"))
    key = task.attempts[0].agent
    made.supervisor.kill(key)

    with pytest.raises(RuneError, match="no Claude Code session recorded"):
        Continuing(dispatch()).resume(key)


def test_the_agents_model_and_permission_mode_are_carried_over() -> None:
    command = ["/bin/claude", "--model", "opus", "--permission-mode=plan", "Do it"]
    assert carried_options(command) == ["--model", "opus", "--permission-mode", "plan"]
    assert carried_options("claude --model x") == []
