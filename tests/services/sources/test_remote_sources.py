"""Remote sources over a real sshd: two "hosts" (aliases of 127.0.0.1) with a root each,
followed through ``runeconsole events`` over one shared connection; drops and refusals
are rows with reasons; actions run as the same CLI command over the same connection."""

from __future__ import annotations

import json
import os
import shlex
import signal
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runeconsole.adapters import git
from runeconsole.adapters.ssh import SshTransport
from runeconsole.adapters.tmux import Tmux
from runeconsole.core.errors import RuneError
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.core.paths import ProjectPaths
from runeconsole.demo.suspended import write_context
from runeconsole.services.claude.bridge.presence import console_open
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.events import Event
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.sources import (
    DOWN,
    UP,
    LocalActions,
    RemoteActions,
    RemoteSource,
    Unreachable,
    Verdict,
)
from runeconsole.services.sources.remote import wait_for
from runeconsole.services.suspension import Suspension
from runeconsole.services.worker_questions import Questions
from tests.support.claude import bridge
from tests.support.questions import ask
from tests.support.sshd import Sshd, remote_events_pids

HOSTILE_ROOT = "proj $HOME 'q' \"dq\""


@pytest.fixture
def remote_root(tmp_path: Path) -> Path:
    root = tmp_path / HOSTILE_ROOT
    git.init_repo(root)
    return root


@pytest.fixture
def follow(sshd: Sshd, tmp_path: Path) -> Iterator[Callable[..., RemoteSource]]:
    started: list[RemoteSource] = []

    def start(
        root: Path | str, host: str = "alpha", command: list[str] | None = None, **kw: object
    ) -> RemoteSource:
        env = [f"RUNECONSOLE_TMUX_SOCKET=rc-remote-{os.getpid()}"]
        env.append(f"CLAUDE_CONFIG_DIR={tmp_path / 'claude-config'}")
        spec = SourceSpec(
            host,
            str(root),
            host,
            tuple(command or sshd.remote_command(*env)),
            tuple(sshd.ssh_prefix),
        )
        prefix = kw.pop("prefix", sshd.ssh_prefix)
        transport = SshTransport(host, prefix, sockets=sshd.sockets, persist=5)  # type: ignore[arg-type]
        source = RemoteSource(spec, lambda *_: None, transport=transport, heartbeat=0.5, **kw)  # type: ignore[arg-type]
        source.start()
        started.append(source)
        return source

    yield start
    for source in started:
        source.stop()


def up(source: RemoteSource, connections: int = 1) -> RemoteSource:
    assert wait_for(lambda: source.status.state == UP and source.connections >= connections, 30), (
        source.status
    )
    return source


def down(source: RemoteSource) -> str:
    assert wait_for(lambda: source.status.state == DOWN, 30), source.status
    return source.status.reason or ""


def agents(source: RemoteSource) -> dict[str, str]:
    return {key: data.get("status") for (kind, key), data in source.rows.items() if kind == "agent"}


def test_two_hosts_are_followed_from_their_snapshots_and_each_change_arrives(
    follow: Callable[..., RemoteSource], remote_root: Path, tmp_path: Path
) -> None:
    other = tmp_path / "beta-root"
    git.init_repo(other)
    Registry(Project(remote_root)).register("worker", "a")
    Registry(Project(other)).register("worker", "b")
    alpha, beta = up(follow(remote_root)), up(follow(other, "beta"))
    assert agents(alpha) == {"worker-a": "active"}
    assert agents(beta) == {"worker-b": "active"}
    assert alpha.meta["root"] == str(remote_root.resolve())
    Registry(Project(remote_root)).mark_crashed("worker-a")
    assert wait_for(lambda: agents(alpha) == {"worker-a": "crashed"}, 15)
    assert agents(beta) == {"worker-b": "active"}


def test_a_killed_remote_stream_is_followed_again_from_a_fresh_snapshot(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    Registry(Project(remote_root)).register("worker", "a")
    source = up(follow(remote_root))
    (pid,) = remote_events_pids(remote_root)
    os.kill(pid, signal.SIGKILL)
    Registry(Project(remote_root)).register("worker", "b")  # while nothing follows it
    up(source, connections=2)
    assert agents(source) == {"worker-a": "active", "worker-b": "active"}


def test_a_dropped_ssh_connection_reconnects_and_shows_the_same_state(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    Registry(Project(remote_root)).register("worker", "a")
    source = up(follow(remote_root))
    before = dict(source.rows)
    source.transport.close()  # ssh -O exit: the master and every session on it end
    up(source, connections=2)
    assert source.rows.keys() == before.keys()


def test_a_stream_gone_silent_is_a_drop_not_a_hang(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    source = up(follow(remote_root))
    (pid,) = remote_events_pids(remote_root)
    os.kill(pid, signal.SIGSTOP)  # alive but silent: no heartbeat comes
    try:
        assert "no heartbeat" in down(source)
    finally:
        os.kill(pid, signal.SIGKILL)
    up(source, connections=2)


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("refused", "Connection refused"),
        ("no-root", "no such directory"),
        ("no-command", "not installed on alpha"),
        ("old-version", "runeconsole 0.0.1 on alpha"),
    ],
)
def test_a_source_that_cannot_be_followed_is_down_with_the_reason_and_retried(
    follow: Callable[..., RemoteSource],
    remote_root: Path,
    sshd: Sshd,
    tmp_path: Path,
    case: str,
    says: str,
) -> None:
    kw: dict[str, object] = {"backoff": (0.2, 0.4)}
    root: Path | str = remote_root
    if case == "refused":
        kw["prefix"] = [*sshd.ssh_prefix, "-p", "1"]
    elif case == "no-root":
        root = tmp_path / "nowhere"
    elif case == "no-command":
        kw["command"] = ["no-such-runeconsole"]
    else:
        fake = tmp_path / "old-runeconsole"
        hello = {"event": "snapshot", "protocol": 1, "version": "0.0.1", "root": "/"}
        fake.write_text(f"#!/bin/sh\necho '{json.dumps(hello)}'\nsleep 30\n")
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
        kw["command"] = [str(fake)]
    source = follow(root, **kw)
    assert says in down(source)
    first = source.status
    assert first.retry_in is not None
    assert wait_for(lambda: source.status is not first, 10)  # tried again


# -- routed actions --------------------------------------------------------------------------


def test_an_answer_with_quotes_and_dollars_reaches_the_remote_question_intact(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    ask(remote_root, "task-1")
    source = up(follow(remote_root))
    (question_id,) = [key for kind, key in source.rows if kind == "question"]
    text = 'it\'s "$HOME" and `id`; $(rm -rf x) *'
    result = RemoteActions(source).answer(question_id, text=text)
    assert result["answer"] == text
    answer = Questions(Project(remote_root)).get(question_id).answer
    assert answer is not None and answer.answer == text
    assert wait_for(lambda: ("question", question_id) not in source.rows, 15)  # answered


def test_kill_and_the_merge_queue_run_on_the_owning_host(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    Registry(Project(remote_root)).register("worker", "a")
    source = up(follow(remote_root))
    actions = RemoteActions(source)
    assert actions.kill("worker-a")["status"] == "terminated"
    assert Registry(Project(remote_root)).get("worker-a").status == "terminated"
    assert actions.process_queue()["outcomes"] == []
    with pytest.raises(RuneError, match=r"^alpha: "):
        actions.kill("worker-nobody")


def test_an_answer_during_an_outage_is_refused_and_nothing_is_written(
    follow: Callable[..., RemoteSource], remote_root: Path, sshd: Sshd
) -> None:
    path = ask(remote_root, "task-2")
    source = follow(remote_root, prefix=[*sshd.ssh_prefix, "-p", "1"], backoff=(5, 5))
    down(source)
    with pytest.raises(
        Unreachable,
        match=r"alpha is unreachable \(ssh to alpha failed: .*refused\): nothing was sent",
    ):
        RemoteActions(source).answer("rune-work-20261123-120000/task-2.q1", options=["A"])
    assert not list(path.parent.glob("*.answer"))


def test_g_on_a_remote_agent_opens_ssh_t_tmux_attach_in_a_new_window(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    source = RemoteSource(
        SourceSpec("alpha", str(remote_root), "alpha"), lambda *_: None, heartbeat=1
    )
    argv = RemoteActions(source).attach_window_argv("worker-a", "rc-worker a", "sock $x")
    assert argv[:5] == ["tmux", "new-window", "-n", "alpha/worker-a", "--"]
    assert argv[5] == "ssh" and argv[-4:] == [
        "-t",
        "--",
        "alpha",
        "tmux -L 'sock $x' attach-session -t '=rc-worker a'",
    ]


def test_g_on_a_remote_background_session_opens_its_claude_attach_over_ssh_t(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    source = RemoteSource(
        SourceSpec("alpha", str(remote_root), "alpha"), lambda *_: None, heartbeat=1
    )
    argv = RemoteActions(source).attach_window_argv("worker-b", None)
    assert argv[:5] == ["tmux", "new-window", "-n", "alpha/worker-b", "--"]
    assert argv[5] == "ssh" and argv[-4:-1] == ["-t", "--", "alpha"]
    remote = ["runeconsole", "background", "attach", "worker-b", "--root", str(remote_root)]
    assert argv[-1] == shlex.join(remote)  # quoted once, whatever the root holds


def test_listeners_hear_a_reset_with_the_snapshot_then_single_changes(
    sshd: Sshd, remote_root: Path, tmp_path: Path
) -> None:
    heard: list[tuple[list[Event], bool]] = []
    got = threading.Event()

    def listener(_: RemoteSource, events: list[Event], reset: bool) -> None:
        heard.append((events, reset))
        if any(e.get("key") == "worker-z" for e in events):
            got.set()

    spec = SourceSpec("alpha", str(remote_root), "alpha", tuple(sshd.remote_command()))
    transport = SshTransport("alpha", sshd.ssh_prefix, sockets=sshd.sockets, persist=5)
    source = RemoteSource(spec, listener, transport=transport, heartbeat=0.5)
    source.start()
    try:
        up(source)
        Registry(Project(remote_root)).register("worker", "z")
        assert got.wait(15)
    finally:
        source.stop()
    resets = [reset for events, reset in heard if events]
    assert resets[0] is True and resets[-1] is False


def test_a_local_source_takes_the_same_actions_in_process_with_the_same_results(
    follow: Callable[..., RemoteSource], remote_root: Path, project: Path
) -> None:
    for root in (remote_root, project):
        ask(root, "task-3")
        Registry(Project(root)).register("worker", "a")
    remote = RemoteActions(up(follow(remote_root)))
    local = LocalActions(Project(project))
    question = "rune-work-20261123-120000/task-3.q1"
    text = "keep $PATH as 'it' is"
    there, here = remote.answer(question, text=text), local.answer(question, text=text)
    assert there.keys() == here.keys() and there["answer"] == here["answer"] == text
    assert remote.kill("worker-a")["status"] == local.kill("worker-a")["status"] == "terminated"
    assert remote.process_queue() == local.process_queue()
    write_context(remote_root, "7")
    key = Suspension(Project(project)).key_for(write_context(project, "7"))
    there, here = remote.resume(key), local.resume(key)
    assert there.keys() == here.keys() and there["resume_count"] == here["resume_count"] == 1
    assert there["task_id"] == "7" and "Parser refactor done" in there["injection"]
    with pytest.raises(RuneError, match=r"^alpha: .*no context file"):
        remote.resume("tmp/work/nothing/7.md")


def test_g_really_attaches_a_window_of_the_operators_tmux_to_the_remote_session(
    follow: Callable[..., RemoteSource], remote_root: Path, tmp_path: Path, tmux_socket: str
) -> None:
    far, ours = Tmux(f"{tmux_socket}-far"), Tmux(tmux_socket)
    session = "rc-worker a's"
    try:
        far_away = ["sh", "-c", "printf 'far away %s\\n' $((6*7)); sleep 60"]
        far.new_session(session, far_away, cwd=tmp_path)
        ours.new_session("ops", ["sleep", "60"], cwd=tmp_path)
        source = up(follow(remote_root))
        here = ["tmux", "-L", tmux_socket]
        argv = RemoteActions(source).attach_window_argv("worker-a", session, far.socket_name, here)
        subprocess.run(argv, check=True, timeout=10)
        assert wait_for(lambda: "far away 42" in ours.capture("ops:alpha/worker-a"), 20)
    finally:
        far.kill_server()


def test_a_permission_request_on_a_host_is_decided_there_with_its_reason_intact(
    follow: Callable[..., RemoteSource], remote_root: Path
) -> None:
    with bridge(remote_root) as made:
        source = up(follow(remote_root, present=True))  # a console stands there: hooks wait
        assert wait_for(lambda: console_open(ProjectPaths(remote_root)), 15)
        made.send("SessionStart")
        done = made.send_later("PermissionRequest-Bash")
        assert wait_for(lambda: permissions(source), 30)
        (request_id,) = permissions(source)
        reason = 'not "$HOME"; `id` it\'s $(x)'
        decided = RemoteActions(source).decide(request_id, Verdict("deny", reason))
        assert decided["state"] == "denied"
        assert wait_for(lambda: "result" in done, 30)
        output = done["result"].output or {}
        assert output["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": reason}
        again = made.send_later("PermissionRequest-Bash")
        assert wait_for(lambda: permissions(source), 30)
        (request_id,) = permissions(source)
        decided = RemoteActions(source).decide(request_id, Verdict("allow", always=True))
        assert decided["state"] == "allowed" and decided["rule"]["behavior"] == "allow"
        assert wait_for(lambda: "result" in again, 30)
        (rule,) = Permissions(Project(remote_root)).rules()
        assert rule.scope != "all agents"  # the request's agent only, by default


def permissions(source: RemoteSource) -> list[str]:
    """The open permission requests the source's stream holds."""
    rows = source.rows.items()
    return [
        key for (kind, key), data in rows if kind == "permission" and data["state"] == "pending"
    ]
