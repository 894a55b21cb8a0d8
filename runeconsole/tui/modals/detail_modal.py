"""A read-only detail screen: a title line and a scrolling body; any close key dismisses
(in a browser, a Close button too: a phone has no esc)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from runeconsole.tui.widgets.tap_keys import TapKeys


class DetailModal(ModalScreen[None]):
    """A read-only detail: a title line and a scrolling body; any close key dismisses."""

    DEFAULT_CSS = """
    #detail {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        border: round $accent;
        padding: 0 1;
        background: $surface;
    }
    #detail-title {
        padding-bottom: 1;
    }
    #detail > TapKeys {
        dock: bottom;  /* Close stays in sight when the window scrolls */
    }
    """

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("enter", "dismiss", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static(self.title_text(), id="detail-title")
            yield Static(self.body(), id="detail-body")

    def on_mount(self) -> None:
        # Only where it shows (a browser): hidden, it was still styled and laid out as
        # the window opened, a layout of the screen and the console under it once more.
        if TapKeys.wanted(self.app):
            self.query_one("#detail").mount(TapKeys([("escape", "Close")]))

    def on_tap_keys_tapped(self, message: TapKeys.Tapped) -> None:
        message.stop()
        self.dismiss()

    def title_text(self) -> Text:
        raise NotImplementedError

    def body(self) -> RenderableType:
        raise NotImplementedError
