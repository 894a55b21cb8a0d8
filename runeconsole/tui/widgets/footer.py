"""The console's footer: Textual's ``Footer``, rebuilt only while its screen is shown.

Textual's footer rebuilds its keys (a widget each) whenever its screen's bindings are
refreshed, which a screen does as it loses focus under a pushed one: the keys of a
screen hidden under a review were rebuilt and laid out again behind it, most of what
opening a review cost. The footer of a screen hidden under an opaque one waits: the
screen refreshes its bindings when it is shown again, and the footer is rebuilt then.
Under a window (a modal, see-through) it is rebuilt as before: it shows.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class ConsoleFooter(Footer):
    def bindings_changed(self, screen: Screen[object]) -> None:
        top = self.app.screen
        if self.is_attached and self.screen is not top and top.styles.background.a >= 1:
            return  # hidden: rebuilt when its screen is shown again (its bindings refresh)
        super().bindings_changed(screen)
