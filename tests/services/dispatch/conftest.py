"""Fixtures of the dispatch tests: a real git project whose own state is kept out of
``git status`` (but not its worktrees: ``new`` must do that itself), a stand-in for Claude
Code reached through ``$RUNECONSOLE_CLAUDE``, and ``Dispatch`` on a private tmux server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.project import Project
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings
from tests.services.dispatch.helpers import install_stand_in, project_excluding_state


@pytest.fixture
def root(project: Path) -> Path:
    """The project with three files committed on main; ``.claude/state`` and the
    talisman kept out of ``git status`` (``.claude/worktrees`` is not: ``new`` does it)."""
    return project_excluding_state(project)


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for Claude Code: writes its arguments beside itself, then sleeps."""
    return install_stand_in(tmp_path, monkeypatch)


@pytest.fixture
def dispatch(root: Path, tmux_socket: str, stand_in: Path) -> Callable[[], Dispatch]:
    """A ``Dispatch`` on the project as it stands (the talisman read when it is made)."""

    def make() -> Dispatch:
        project = Project(root)
        settings = SupervisorSettings(socket_name=tmux_socket)
        supervisor = Supervisor(
            project, settings=settings, tmux=Tmux(tmux_socket, config_file="/dev/null")
        )
        return Dispatch(project, supervisor=supervisor)

    return make
