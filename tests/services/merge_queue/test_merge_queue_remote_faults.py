"""The remote's faults, for real: a processor killed -9 between its push and its own
write (recovered by asking the remote), the remote over SSH through the suite's private
``sshd``, a key that would need a passphrase (refused at once, never a prompt), and a
host that accepts and never answers (ended at the timeout, ssh with it)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runeconsole.adapters import git_remote as gr
from runeconsole.services.merge_queue import COMPLETED, IN_PROGRESS
from tests.support.merge_batches import check_command, make_branches
from tests.support.merge_queue import (
    git,
    kill_processor_when,
    make_queue,
    paused_at,
    queue_file,
    rev,
    start_processor,
    write_talisman,
)
from tests.support.merge_remote import Team, make_team
from tests.support.sshd import Sshd

pytestmark = pytest.mark.e2e


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return make_team(tmp_path / "team")


def test_a_kill_between_the_push_and_the_queues_write_is_recovered_by_asking_the_remote(
    team: Team, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good"})
    write_talisman(team.project, "true", remote="origin")
    make_queue(team.project, remote="origin").add("feat/one")
    local_before = rev(team.project, "main")
    env, ready = paused_at("merge-queue-batch-pushed", tmp_path / "pauses")

    kill_processor_when(team.project, ready, False, env)

    entry = queue_file(team.project)["entries"][0]
    assert entry["status"] == IN_PROGRESS  # the queue never wrote that it landed
    assert team.remote_subjects()[0] == "add one"  # but the remote has it
    assert rev(team.project, "main") == local_before
    # git's push moved origin/main here too; as a push whose answer was lost would not
    # have, it is put back: only the remote itself knows the batch landed.
    git(team.project, "update-ref", "refs/remotes/origin/main", local_before)

    after = start_processor(team.project)
    out, err = after.communicate(timeout=120)

    assert after.returncode == 0, err
    assert "had merged before the interruption; finished it" in out
    entry = queue_file(team.project)["entries"][0]
    assert entry["status"] == COMPLETED
    assert entry["merged_commit"] == team.remote_main()
    assert team.remote_subjects().count("add one") == 1  # landed once
    assert rev(team.project, "main") == team.remote_main()  # the local main followed
    assert (team.project / "one.txt").exists()


def test_the_remote_reached_over_ssh_through_the_private_sshd(
    team: Team, sshd: Sshd, tmp_path: Path
) -> None:
    git(team.project, "remote", "set-url", "origin", f"alpha:{team.origin}")
    git(team.project, "config", "core.sshCommand", " ".join(sshd.ssh_prefix))
    make_branches(team.project, {"one": "good", "two": "good"})
    team.mate_pushes({"m.txt": "m\n"}, "the teammate, before us")
    queue = make_queue(team.project, None, check_command(tmp_path), remote="origin")
    queue.add("feat/one")
    queue.add("feat/two")

    report = queue.process(run_all=True)

    assert [o.status for o in report.outcomes] == [COMPLETED, COMPLETED]
    assert team.remote_subjects()[:3] == ["add two", "add one", "the teammate, before us"]
    assert rev(team.project, "main") == team.remote_main()


def test_a_key_that_would_ask_for_its_passphrase_is_refused_at_once_never_a_prompt(
    team: Team, sshd: Sshd, tmp_path: Path
) -> None:
    locked = tmp_path / "locked_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", str(locked)],
        check=True,
        timeout=30,
    )
    authorized = sshd.home / "authorized_keys"
    kept = authorized.read_text()  # the sshd is shared by the session's tests
    authorized.write_text(kept + locked.with_suffix(".pub").read_text())
    config = tmp_path / "ssh_config"
    config.write_text(
        (sshd.home / "ssh_config").read_text().replace(str(sshd.home / "user_key"), str(locked))
    )
    git(team.project, "remote", "set-url", "origin", f"alpha:{team.origin}")
    git(team.project, "config", "core.sshCommand", f"ssh -F {config}")

    started = time.monotonic()
    try:
        with pytest.raises(gr.RemoteUnreachable, match=r"[Pp]ermission denied"):
            gr.fetch(team.project, "origin", ["main"], timeout=60)
    finally:
        authorized.write_text(kept)

    assert time.monotonic() - started < 20  # answered, not waiting on a passphrase


@contextlib.contextmanager
def black_hole() -> Iterator[int]:
    """A port that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


def ssh_processes_to(port: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if words and words[0].endswith(b"ssh") and any(str(port).encode() in w for w in words):
                found.append(int(entry))
    return found


def test_a_host_that_never_answers_is_given_up_at_the_timeout_and_ssh_ends_with_git(
    team: Team,
) -> None:
    with black_hole() as port:
        git(team.project, "remote", "set-url", "origin", f"ssh://127.0.0.1:{port}/x.git")
        git(
            team.project,
            "config",
            "core.sshCommand",
            "ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
        )
        started = time.monotonic()
        with pytest.raises(gr.RemoteUnreachable, match="no answer within 2s"):
            gr.fetch(team.project, "origin", ["main"], timeout=2)
        took = time.monotonic() - started

        assert took < 10
        assert ssh_processes_to(port) == []
