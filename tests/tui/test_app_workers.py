"""Every worker of the console goes through ``@background`` (``tui/support/workers.py``),
the app's helpers' too: what the upkeep (what a kill left undone, the daily prune) and the
background-sessions poll raise is shown to the operator, never lost."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.services.journal import Journal
from runeconsole.services.retention import Retention
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.console.background_poll import BackgroundPoll
from runeconsole.tui.support import workers
from tests.support.paths import REPO
from tests.support.polling import until


def shown(app: RuneConsole, text: str) -> bool:
    return any(text in n.message for n in app._notifications)


def broken(*args: object, **kwargs: object) -> object:
    raise ValueError("the disk said no")


async def shown_failing(project: Path, start: Callable[[RuneConsole], object]) -> RuneConsole:
    """The console opened, ``start`` run in it: what the worker raised is shown, and the
    console goes on."""
    app = create_app(project, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        start(app)
        await until(pilot, lambda: shown(app, "ValueError: the disk said no"))
        assert app.is_running
    return app


async def test_what_a_kill_left_undone_failing_to_be_read_is_shown(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Journal, "interrupted", broken)
    app = await shown_failing(project, lambda app: None)  # read as the console opens
    assert app.upkeep.interrupted is None


async def test_a_prune_failing_unforeseen_is_shown(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Retention, "due", broken)
    app = await shown_failing(project, lambda app: app.upkeep.check())
    assert app.upkeep.last_report is None


async def test_the_background_sessions_poll_failing_unforeseen_is_shown(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def poll(app: RuneConsole) -> None:
        polling = BackgroundPoll(app, app.project, app.registry)
        monkeypatch.setattr(polling.background, "sync", broken)
        polling.poll()

    await shown_failing(project, poll)


def test_no_worker_is_started_but_through_background() -> None:
    """A thread worker started anywhere else (``run_worker(..., thread=True)``, Textual's
    ``@work``) would fail silently: none is, outside ``workers.py``."""
    found = []
    for path in sorted((REPO / "runeconsole").rglob("*.py")):
        if path == Path(workers.__file__):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("textual"):
                if any(alias.name == "work" for alias in node.names):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: imports work")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run_worker"
                and any(
                    k.arg == "thread"
                    and not (isinstance(k.value, ast.Constant) and not k.value.value)
                    for k in node.keywords
                )
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: a thread worker")
    assert not found, "workers started outside @background:\n" + "\n".join(found)
