"""What every console window shares (the project's console and the fleet console): tabs
of ``LivePane``s, the filter line under them, ``?`` for the pane's keys, ``q`` to quit, and
no control character drawn (``terminal_safe.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import App
from textual.binding import Binding
from textual.filter import LineFilter
from textual.widgets import Input, TabbedContent

from runeconsole.tui.filter_box import FilterBox
from runeconsole.tui.help_screen import HelpScreen
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.pane import LivePane
from runeconsole.tui.terminal_safe import NoControlCharacters


class PanesApp(App[None]):
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        # Priority: it acts as the key arrives, before the keys typed after it are handed to
        # the table (whose own keys, like r for respawn, they would otherwise fire).
        Binding("slash", "filter", "Filter", priority=True),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    NO_CONTROLS = NoControlCharacters()
    # The windows' tap buttons (tap_keys.py) show in a browser; this shows them anywhere.
    force_tap_keys = False

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the one that keeps control characters off the terminal."""
        return [*super().get_line_filters(), self.NO_CONTROLS]

    def current_pane(self) -> LivePane:
        active = self.query_one(TabbedContent).active_pane
        return active.query_one(LivePane) if active else self.query(LivePane).first()

    def action_help(self) -> None:
        pane = self.current_pane()
        self.push_screen(HelpScreen(pane.TITLE, pane.HELP_KEYS))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "filter":  # a `/` typed into a text box or over a window is just that
            return not isinstance(self.focused, Input) and len(self.screen_stack) == 1
        return True

    # -- the filter: it belongs to the pane it was typed on ---------------------------------

    def action_filter(self) -> None:
        self.query_one(FilterBox).open()

    def action_clear_filter(self) -> None:
        if self.query_one(FilterBox).clear_filter():
            self.current_pane().filter("")
            self.current_pane().query_one(KeyedTable).focus()

    def on_filter_box_filter(self, message: FilterBox.Filter) -> None:
        self.current_pane().filter(message.text)

    def on_filter_box_done(self, _: FilterBox.Done) -> None:
        self.current_pane().query_one(KeyedTable).focus()
