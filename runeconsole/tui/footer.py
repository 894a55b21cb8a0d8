"""The console's footer: Textual's ``Footer``, rebuilt only while its screen is shown.

Textual's footer rebuilds its keys (a widget each) whenever its screen's bindings are
refreshed, which a screen does as it loses focus under a pushed one (a review, a
window): the keys of a hidden screen were rebuilt and laid out again behind the new
one, most of what opening a review cost. A hidden screen's footer waits: the screen
refreshes its bindings when it is shown again, and the footer is rebuilt then.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class ConsoleFooter(Footer):
    def bindings_changed(self, screen: Screen[object]) -> None:
        if self.is_attached and self.screen is not self.app.screen:
            return  # hidden: rebuilt when its screen is shown again (its bindings refresh)
        super().bindings_changed(screen)
