"""The window in which the operator decides what an agent waits for (a question's answer,
a permission): its parts stacked in a bordered window, a countdown, a text box shown only
when an answer is typed, and a note; ``escape`` closes it without deciding. Where the
console is served to a browser, a row of buttons (``tap_keys.py``) offers every key the
window takes, ``escape`` included, to a pointer or a finger."""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.binding import Binding
from textual.screen import ModalScreen

from runeconsole.tui.tap_keys import TapKeys

Decision = TypeVar("Decision")


class DecisionModal(ModalScreen[Decision]):
    """Subclasses compose a ``VerticalScroll`` of class ``window`` holding ``part`` statics,
    a ``countdown``, a ``typed`` input and a ``note``; each may recolour its border."""

    DEFAULT_CSS = """
    DecisionModal .window {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 90%;
        border: round $warning;
        padding: 0 1;
        background: $surface;
    }
    DecisionModal .part {
        height: auto;
        padding-bottom: 1;
    }
    DecisionModal .countdown {
        height: auto;
    }
    DecisionModal .typed {
        display: none;
    }
    DecisionModal .note {
        display: none;
        height: auto;
    }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    def tap_keys(self) -> list[tuple[str, str]]:
        """The keys the window takes now, each with the label of its button."""
        return [("escape", "Close")]

    def on_mount(self) -> None:
        self.query_one(".window").mount(TapKeys(self.tap_keys()))

    def refresh_taps(self) -> None:
        """The window's keys changed (the next question, another scope): new buttons."""
        taps = self.query(TapKeys)
        if taps:
            self.run_worker(taps.first().show(self.tap_keys()), group="tap-keys")

    def on_tap_keys_tapped(self, message: TapKeys.Tapped) -> None:
        """A tap is the key it names: ``escape`` closes, any other goes to ``on_key``."""
        message.stop()
        if message.key == "escape":
            self.dismiss(None)
            return
        character = {"enter": "\r", "space": " "}.get(message.key, message.key)
        handler = getattr(self, "on_key", None)
        if handler is not None:
            handler(events.Key(message.key, character))
