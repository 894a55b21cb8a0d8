"""Driving the console like an operator does."""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled


def burst(app: App, text: str) -> None:
    """Keys queued in one go, as a paste or keys sent over ssh arrive: no pause between
    them, unlike ``Pilot.press``."""
    for char in text:
        event = events.Key({"/": "slash"}.get(char, char), char)
        event.set_sender(app)
        app._driver.send_message(event)


async def settle(pilot: Pilot) -> None:
    """Until every worker is done (one cancelled by its successor included) and the
    messages they posted are handled."""
    while True:
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


async def changes_looked(pilot: Pilot) -> None:
    """Until the Agents pane's CHANGES have been looked at (the first look runs in a
    worker after the first frame) and drawn."""
    from runeconsole.tui.panes.changes_watch import ChangesWatch
    from tests.support.polling import until

    watches = list(pilot.app.query(ChangesWatch))
    await until(pilot, lambda: all(watch.idle for watch in watches))
    await pilot.pause()
