"""``new_task``, the fleet console's ``n`` on a source: on a host, ``runeconsole new ...
--json`` over the source's SSH connection (a real private sshd, a root whose path a shell
would misread), every value one argument whatever it holds; on a root of this machine,
``Dispatch.new`` in-process, with the same report. Claude Code is stood in for by
``/bin/true``, its sessions on a private tmux server."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runeconsole.adapters import git
from runeconsole.adapters.ssh import SshTransport
from runeconsole.core.errors import RuneError
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.project import Project
from runeconsole.services.sources import UP, LocalActions, RemoteActions, RemoteSource, Unreachable
from runeconsole.services.sources.remote import wait_for
from tests.support.sshd import Sshd

HOSTILE_ROOT = "proj $HOME 'q' \"dq\""
TEXT = '-- it\'s "$HOME" and `id`; $(touch pwned) *\nsecond line;'


@pytest.fixture
def claude_here(tmux_socket: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """This machine's ``new`` (the local source) starts ``/bin/true`` on the private server."""
    monkeypatch.setenv("RUNECONSOLE_CLAUDE", "/bin/true")
    monkeypatch.setenv("RUNECONSOLE_TMUX_SOCKET", tmux_socket)
    return tmux_socket


@pytest.fixture
def host(sshd: Sshd, tmp_path: Path, tmux_socket: str) -> Iterator[Callable[..., RemoteSource]]:
    """A source on host ``alpha`` whose ``runeconsole`` starts ``/bin/true`` for Claude Code
    on a private tmux server of its own (killed at the end)."""
    started: list[RemoteSource] = []
    socket = f"{tmux_socket}-far-{uuid.uuid4().hex[:4]}"

    def follow(root: Path, **kwargs: object) -> RemoteSource:
        env = [
            "RUNECONSOLE_CLAUDE=/bin/true",
            f"RUNECONSOLE_TMUX_SOCKET={socket}",
            f"CLAUDE_CONFIG_DIR={tmp_path / 'claude-config'}",
        ]
        spec = SourceSpec(
            "alpha", str(root), "alpha", tuple(sshd.remote_command(*env)), tuple(sshd.ssh_prefix)
        )
        prefix = kwargs.pop("prefix", sshd.ssh_prefix)
        transport = SshTransport("alpha", prefix, sockets=sshd.sockets, persist=5)  # type: ignore[arg-type]
        source = RemoteSource(spec, lambda *_: None, transport=transport, heartbeat=0.5, **kwargs)  # type: ignore[arg-type]
        source.start()
        started.append(source)
        return source

    yield follow
    for source in started:
        source.stop()
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=10)


def up(source: RemoteSource) -> RemoteSource:
    assert wait_for(lambda: source.status.state == UP, 30), source.status
    return source


def repository(root: Path) -> Path:
    git.init_repo(root)
    (root / ".git" / "info" / "exclude").write_text(".claude/\n")
    return root


def task_file(root: Path, task: str) -> dict:
    return json.loads((root / ".claude" / "state" / "tasks" / f"{task}.json").read_text())


def shape(report: dict) -> dict:
    """A report without what differs by root and time."""
    return {
        "keys": sorted(report),
        "task_id": report["task_id"],
        "text": report["text"],
        "state": report["state"],
        "attempts": [(a["n"], a["agent"], a["branch"], a["state"]) for a in report["attempts"]],
    }


def test_a_task_made_on_a_host_over_ssh_is_made_there_as_in_process_here_its_text_whole(
    host: Callable[..., RemoteSource], tmp_path: Path, claude_here: str
) -> None:
    there = repository(tmp_path / HOSTILE_ROOT)
    here = repository(tmp_path / "here")
    request = NewTask(text=TEXT, count=2)
    far = RemoteActions(up(host(there))).new_task(request)
    near = LocalActions(Project(here)).new_task(request)
    assert shape(far) == shape(near)
    assert far["text"] == TEXT.strip() and far["state"] == "working"
    task = task_file(there, far["task_id"])
    assert task["text"] == TEXT.strip() and len(task["attempts"]) == 2  # no --count in the text
    for attempt in task["attempts"]:
        worktree = Path(attempt["worktree"])
        assert worktree.parent == there.resolve() / ".claude" / "worktrees"
        assert (worktree / ".git").is_file()
    assert not list(tmp_path.rglob("pwned")) and not (Path.home() / "pwned").exists()


def test_every_choice_of_the_form_reaches_the_host_as_given(
    host: Callable[..., RemoteSource], tmp_path: Path
) -> None:
    there = repository(tmp_path / HOSTILE_ROOT)
    request = NewTask(
        text="Tidy the docs",
        role="docs",
        name="tidy",
        base="main",
        model="sonnet",
        permission_mode="plan",
        background=True,
        node_id="n-7",
        bead_id="b-3",
    )
    report = RemoteActions(up(host(there))).new_task(request)
    # claude --bg from /bin/true says no session: no agent started, the report says why
    # (new exits 1 with it), and every value stands in the task as it was given.
    assert report["state"] == "dropped"
    assert "claude --bg" in report["attempts"][0]["error"]
    task = task_file(there, "tidy")
    given = {k: task[k] for k in ("role", "base", "model", "permission_mode", "mode")}
    assert given == {
        "role": "docs",
        "base": "main",
        "model": "sonnet",
        "permission_mode": "plan",
        "mode": "background",
    }
    assert (task["node_id"], task["bead_id"]) == ("n-7", "b-3")


def test_a_task_the_host_refuses_raises_its_reason_and_leaves_nothing_there(
    host: Callable[..., RemoteSource], tmp_path: Path
) -> None:
    there = repository(tmp_path / HOSTILE_ROOT)
    actions = RemoteActions(up(host(there)))
    with pytest.raises(RuneError, match=r"^alpha: .*base 'nope' names no commit"):
        actions.new_task(NewTask(text="Fix it", base="nope"))
    assert not (there / ".claude" / "state" / "tasks").exists() or not os.listdir(
        there / ".claude" / "state" / "tasks"
    )
    assert not (there / ".claude" / "worktrees").exists()


def test_while_the_host_is_down_nothing_is_sent(
    host: Callable[..., RemoteSource], tmp_path: Path, sshd: Sshd
) -> None:
    there = repository(tmp_path / HOSTILE_ROOT)
    source = host(there, prefix=[*sshd.ssh_prefix, "-p", "1"], backoff=(5, 5))
    assert wait_for(lambda: source.status.state != "connecting", 30)
    with pytest.raises(Unreachable, match=r"^alpha is unreachable .*nothing was sent"):
        RemoteActions(source).new_task(NewTask(text="Fix it"))
    assert not (there / ".claude" / "state" / "tasks").exists()
