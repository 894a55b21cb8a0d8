"""Buttons for the keys a window takes, so a pointer or a finger can do what a key does.

In a browser, and above all on a phone, there is no ``esc`` and typing a capital letter
is a chore: a window that decides something (a question, a permission) shows one button
per key it takes, and a tap on one is handled as that key would be. The buttons never
take the focus, so the keys keep working as before. They show where the console is
served to a browser (``App.is_web``), or wherever an app sets ``force_tap_keys``; in a
terminal the windows look as they always have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button

CELL = 20  # columns per button: the longest label, and room for a finger


class TapButton(Button, can_focus=False):
    """A button that never takes the focus away from the window's keys."""


class TapKeys(Widget):
    """The buttons in a grid as wide as the window allows, so a narrow one (a phone)
    wraps them onto more rows instead of cutting them off."""

    DEFAULT_CSS = """
    TapKeys {
        layout: grid;
        grid-size: 4;
        grid-gutter: 0 1;
        grid-rows: 3;
        height: auto;
        display: none;
        margin-top: 1;
    }
    TapKeys.-shown {
        display: block;
    }
    TapKeys TapButton {
        width: 1fr;
        min-width: 5;
    }
    """

    class Tapped(Message):
        """A button was tapped: handle ``key`` as if it were pressed."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, keys: Sequence[tuple[str, str]] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.keys = list(keys)

    def compose(self) -> ComposeResult:
        for key, label in self.keys:
            yield TapButton(label, name=key, classes="tap")

    @staticmethod
    def wanted(app: App[Any]) -> bool:
        """Whether buttons show in this app (served to a browser, or forced)."""
        return bool(getattr(app, "force_tap_keys", False) or app.is_web)

    def on_mount(self) -> None:
        self.set_class(self.wanted(self.app), "-shown")

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        if width > 0:
            self.styles.grid_size_columns = max(1, min(len(self.keys) or 1, width // CELL))

    async def show(self, keys: Sequence[tuple[str, str]]) -> None:
        """Put these buttons in place of the ones shown."""
        if list(keys) == self.keys:
            return
        self.keys = list(keys)
        await self.remove_children()
        await self.mount_all(TapButton(label, name=key, classes="tap") for key, label in keys)
        self._fit(self.size.width)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.name:
            self.post_message(self.Tapped(event.button.name))
