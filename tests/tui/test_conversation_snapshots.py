"""Snapshots of the conversation screen (80x24 and wide, a tool call opened) and of the
search screen, on the transcript the real Claude Code wrote (times shown in UTC)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.conversations.screen import ConversationScreen
from runeconsole.tui.conversations.search import SearchScreen
from tests.support.paths import SNAP
from tests.support.polling import until
from tests.tui.conversation_fixtures import KEY, conversation_agent, sent

SNAP_ROOT = SNAP / "conversation"


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def app(snap_dir: Path) -> RuneConsole:
    git.init_repo(SNAP_ROOT)
    conversation_agent(SNAP_ROOT)
    sent(SNAP_ROOT, KEY, "Please do the migration")
    return create_app(SNAP_ROOT, clock=ManualClock(), watch=False, tick_seconds=0)


async def open_conversation(pilot: Pilot[None], *keys: str) -> None:
    app = pilot.app
    assert isinstance(app, RuneConsole)
    await until(pilot, lambda: KEY in app.agents_pane.records)
    app.agents_pane.select(KEY)
    await pilot.press("t")
    await until(pilot, lambda: isinstance(app.screen, ConversationScreen) and app.screen.whole)
    await pilot.press(*keys)
    await pilot.pause()


def test_conversation_80x24(snap_compare: Callable[..., bool], app: RuneConsole) -> None:
    async def before(pilot: Pilot[None]) -> None:
        await open_conversation(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=before)


def test_conversation_wide_with_a_tool_call_opened(
    snap_compare: Callable[..., bool], app: RuneConsole
) -> None:
    async def before(pilot: Pilot[None]) -> None:
        await open_conversation(pilot, "g", "j", "enter")

    assert snap_compare(app, terminal_size=(150, 40), run_before=before)


def test_search(snap_compare: Callable[..., bool], app: RuneConsole) -> None:
    async def before(pilot: Pilot[None]) -> Any:
        app = pilot.app
        assert isinstance(app, RuneConsole)
        await until(pilot, lambda: KEY in app.agents_pane.records)
        await pilot.press("S")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await pilot.press(*"hello OR migration", "enter")
        await until(pilot, lambda: screen.typed == "hello OR migration")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=before)
