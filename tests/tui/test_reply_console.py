"""Peek and reply from the consoles: the agent's detail shows its screen and last message,
``m`` types a message that arrives in its pane, a refusal stays in the window; the fleet
console routes the same ``say`` and ``peek`` to the row's source, in-process for a local
root and over a real private sshd for a host."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static

from runeconsole.core.fleet_file import SourceSpec
from runeconsole.tui.console.app import create_app
from runeconsole.tui.fleet_console.app import FleetConsole, create_fleet_app
from runeconsole.tui.modals.agent_detail import AgentDetail
from runeconsole.tui.modals.agent_peek import AgentPeek
from runeconsole.tui.modals.message_modal import MessageModal
from tests.support.paste_reader import PASTE_END, PASTE_START
from tests.support.polling import until
from tests.support.replies import TmuxAgents
from tests.support.sshd import Sshd


def pasted(text: str) -> bytes:
    return PASTE_START + text.encode() + PASTE_END + b"\r"


def shown(pilot: Pilot, selector: str) -> str:
    widget = pilot.app.screen.query_one(selector, Static)
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


def peeked(pilot: Pilot, part: str) -> str:
    """A part of the agent's window's peek as shown ("" where it shows none)."""
    value = getattr(pilot.app.screen.query_one(AgentPeek).parts(), part)
    return value.plain if value is not None else ""


def toasts(app: App[None], title: str) -> list[str]:
    return [n.message for n in app._notifications if n.title == title]


async def type_message(pilot: Pilot, text: str) -> MessageModal:
    await pilot.press("m")
    await until(pilot, lambda: isinstance(pilot.app.screen, MessageModal))
    window = pilot.app.screen
    assert isinstance(window, MessageModal)
    await pilot.press(*text, "enter")
    return window


async def test_the_detail_shows_the_screen_and_m_reaches_the_agent(
    tmux_agents: TmuxAgents,
) -> None:
    log = tmux_agents.spawn("a")
    tmux_agents.registry.update(
        "worker-a", {"claude": {"last_assistant_message": "Tests pass; ready."}}
    )
    app = create_app(tmux_agents.root, rescan_seconds=60)
    async with app.run_test(size=(100, 34)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.has("worker-a"))
        app.agents_pane.select("worker-a")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, AgentDetail))
        await until(pilot, lambda: "tmux session rune-worker-a" in peeked(pilot, "screen_title"))
        assert peeked(pilot, "message") == "Tests pass; ready."
        window = await type_message(pilot, "/compact; then run the tests")  # "/" is text here
        await until(pilot, lambda: log.read_bytes() == pasted("/compact; then run the tests"))
        await until(pilot, lambda: isinstance(app.screen, AgentDetail))
        assert not window.is_attached
        # The screen is read again while the window is open.
        await until(pilot, lambda: "/compact; then run the tests" in peeked(pilot, "screen"))
        # Once it has ended, a message is refused in the window, the text kept.
        tmux_agents.registry.mark_terminated("worker-a", "finished")
        window = await type_message(pilot, "are you there?")
        await until(pilot, lambda: "not sent" in shown(pilot, "#message-status"))
        assert "worker-a has ended (terminated: finished)" in shown(pilot, "#message-status")
        assert isinstance(app.screen, MessageModal)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, AgentDetail))
    assert log.read_bytes() == pasted("/compact; then run the tests")


async def test_m_in_the_agents_pane_opens_the_message_window(tmux_agents: TmuxAgents) -> None:
    log = tmux_agents.spawn("a")
    app = create_app(tmux_agents.root, rescan_seconds=60)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.has("worker-a"))
        app.agents_pane.select("worker-a")
        await type_message(pilot, "hello")
        await until(pilot, lambda: log.read_bytes() == pasted("hello"))
        # Each message sent is confirmed, the second to the same agent too.
        await until(pilot, lambda: not isinstance(app.screen, MessageModal))
        await type_message(pilot, "and run the tests")
        await until(
            pilot, lambda: log.read_bytes() == pasted("hello") + pasted("and run the tests")
        )
        await until(pilot, lambda: len(toasts(app, "Message")) == 2)
        assert toasts(app, "Message") == [
            "sent to worker-a: “hello”",
            "sent to worker-a: “and run the tests”",
        ]


@asynccontextmanager
async def fleet_console(specs: list[SourceSpec], **kwargs: object) -> AsyncIterator[Pilot]:
    app = create_fleet_app(specs, heartbeat=0.5, tick_seconds=0, **kwargs)
    async with app.run_test(size=(120, 34)) as pilot:
        await until(pilot, lambda: all(s.state == "up" for s in app.model.states.values()), 60)
        yield pilot


async def select(pilot: Pilot, key: str) -> None:
    app = pilot.app
    assert isinstance(app, FleetConsole)
    await until(pilot, lambda: app.panes[0].table.has(key), 60)
    app.panes[0].table.move_to(key)


async def test_the_fleet_console_says_and_peeks_on_a_local_source(
    tmux_agents: TmuxAgents,
) -> None:
    log = tmux_agents.spawn("a")
    tmux_agents.registry.register("worker", "bare")  # no pane anywhere
    async with fleet_console([SourceSpec("here", str(tmux_agents.root))]) as pilot:
        await select(pilot, "worker-a")  # one source: keys as it has them
        window = await type_message(pilot, "rebase on main")
        await until(pilot, lambda: log.read_bytes() == pasted("rebase on main"))
        await until(pilot, lambda: not window.is_attached)
        await pilot.press("enter")  # peek
        await until(pilot, lambda: isinstance(pilot.app.screen, AgentDetail))
        await until(pilot, lambda: "rebase on main" in peeked(pilot, "screen"))
        await pilot.press("escape")
        await select(pilot, "worker-bare")
        await type_message(pilot, "hello")
        await until(pilot, lambda: "not sent" in shown(pilot, "#message-status"))
        assert "no pane known" in shown(pilot, "#message-status")


async def test_the_fleet_console_says_and_peeks_over_ssh(
    tmux_agents: TmuxAgents, sshd: Sshd
) -> None:
    log = tmux_agents.spawn("a")
    tmux_agents.registry.register("worker", "bare")
    env = [f"RUNECONSOLE_TMUX_SOCKET={tmux_agents.socket}", f"TMUX_TMPDIR={tmux_tmpdir()}"]
    far = SourceSpec(
        "far",
        str(tmux_agents.root),
        "alpha",
        tuple(sshd.remote_command(*env)),
        tuple(sshd.ssh_prefix),
    )
    async with fleet_console([far], sockets=sshd.sockets) as pilot:
        await select(pilot, "worker-a")
        window = await type_message(pilot, 'say "hi" -- and $HOME stays text')
        await until(
            pilot, lambda: log.read_bytes() == pasted('say "hi" -- and $HOME stays text'), 60
        )
        await until(pilot, lambda: not window.is_attached)
        await pilot.press("p")
        await until(pilot, lambda: isinstance(pilot.app.screen, AgentDetail))
        await until(pilot, lambda: "$HOME stays text" in peeked(pilot, "screen"), 60)
        assert "tmux session rune-worker-a" in peeked(pilot, "screen_title")
        await pilot.press("m", *"from the peek", "enter")
        await until(pilot, lambda: log.read_bytes().endswith(pasted("from the peek")), 60)
        await until(pilot, lambda: isinstance(pilot.app.screen, AgentDetail), 60)
        await pilot.press("escape")
        await select(pilot, "worker-bare")
        await type_message(pilot, "hello")
        await until(pilot, lambda: "not sent" in shown(pilot, "#message-status"), 60)
        status = shown(pilot, "#message-status")
        assert "far:" in status and "no pane known" in status


def tmux_tmpdir() -> str:
    return os.environ.get("TMUX_TMPDIR") or "/tmp"
