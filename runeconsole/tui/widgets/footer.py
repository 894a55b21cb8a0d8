"""The console's footer: Textual's ``Footer``, rebuilt only when what it shows changed,
and only while its screen is shown.

Textual's footer rebuilds its keys (a widget each, styled and laid out) whenever its
screen's bindings are refreshed: on every focus change, so on ``/`` and ``escape`` of the
filter, a pane switch, a window opened and closed. Most of those leave the keys it shows
as they were; rebuilding them anyway was a third of such a key's work. The footer now
rebuilds when the keys it would show differ from those it shows (their key, label,
action, whether enabled, tooltip: ``shown_keys``), and keeps the pane's keys while the
filter line has the keys (its own are not shown, and the pane's come back on escape).

The footer of a screen hidden under an opaque one waits: the screen refreshes its
bindings when it is shown again, and the footer is rebuilt then. Under a window (a
modal, see-through) it is rebuilt as before: it shows.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

from runeconsole.tui.widgets.filter_box import FilterBox

ShownKeys = tuple[tuple[str, str, str, bool, str], ...]


def shown_keys(screen: Screen[object]) -> ShownKeys:
    """What a footer on ``screen`` would show: each shown binding's key, label, action,
    whether it is enabled and its tooltip, in order."""
    return tuple(
        (binding.key, binding.description, binding.action, enabled, tooltip)
        for (_, binding, enabled, tooltip) in screen.active_bindings.values()
        if binding.show
    )


class ConsoleFooter(Footer):
    _shown: ShownKeys | None = None

    def bindings_changed(self, screen: Screen[object]) -> None:
        top = self.app.screen
        if self.is_attached and self.screen is not top and top.styles.background.a >= 1:
            return  # hidden: rebuilt when its screen is shown again (its bindings refresh)
        if self.is_attached and screen is self.screen and self.app.app_focus:
            if isinstance(screen.focused, FilterBox) and self._shown is not None:
                return  # typing a filter: the pane's keys stay in sight
            keys = shown_keys(screen)
            if keys == self._shown:
                return  # the same keys: nothing to rebuild
            self._shown = keys
        super().bindings_changed(screen)
