"""The conversation search across a fleet: a host's hits come over the source's SSH
connection (a real private sshd, ``runeconsole search --json`` there) named by their
source, a root of this machine answers in-process, and the caller merges both newest
first."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from runeconsole.adapters import git
from runeconsole.adapters.ssh import SshTransport
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.project import Project
from runeconsole.services.sources import UP, LocalActions, RemoteActions, RemoteSource
from runeconsole.services.sources.actions import named, newest_first
from runeconsole.services.sources.remote import wait_for
from tests.support.index_transcripts import BASE, Session, identity
from tests.support.sshd import Sshd


def root_with_a_session(base: Path, key: str, said: str, minute: float) -> Path:
    root = base / key
    git.init_repo(root)
    session = Session(base / "transcripts" / key)
    identity(root, key, "worker", session)
    session.write(session.prompt(f"{said} about the gannet", minute))
    session.tool("Bash", {"command": "-rf --gannet"}, "gannet output", minute + 1)
    return root


@pytest.fixture
def remote(sshd: Sshd, private_claude_config: Path) -> Iterator[Callable[[Path], RemoteSource]]:
    started: list[RemoteSource] = []

    def follow(root: Path) -> RemoteSource:
        command = sshd.remote_command(f"CLAUDE_CONFIG_DIR={private_claude_config}")
        spec = SourceSpec("alpha", str(root), "alpha", tuple(command), tuple(sshd.ssh_prefix))
        transport = SshTransport("alpha", sshd.ssh_prefix, sockets=sshd.sockets, persist=5)
        source = RemoteSource(spec, lambda *_: None, transport=transport, heartbeat=0.5)
        source.start()
        started.append(source)
        assert wait_for(lambda: source.status.state == UP, 30), source.status
        return source

    yield follow
    for source in started:
        source.stop()


def test_a_host_s_hits_come_over_ssh_named_by_their_source_and_merge_newest_first(
    remote: Callable[[Path], RemoteSource], tmp_path: Path
) -> None:
    there = root_with_a_session(tmp_path, "worker-far", "first words", 1)
    here = root_with_a_session(tmp_path, "worker-near", "later words", 30)
    source = remote(there)

    far = RemoteActions(source).search("gannet", tool="Bash", since=BASE - timedelta(days=1))
    near = named(LocalActions(Project(here)).search("gannet", limit=5), "here")

    assert [(h.source, h.key, h.tool) for h in far] == [("alpha", "worker-far", "Bash")]
    assert "[gannet]" in far[0].marked()
    unlike = RemoteActions(source).search("-rf gannet")  # a query beginning with a dash
    assert [(h.kind, h.speaker) for h in unlike] == [("prompt", "user")]

    merged = newest_first([far, near, unlike])
    assert [h.source for h in merged] == ["here", "here", "alpha", "alpha"]
    moments = [h.at for h in merged if h.at is not None]
    assert moments == sorted(moments, reverse=True) and len(moments) == 4
