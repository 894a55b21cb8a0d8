"""Showing an input and giving it the keys in the same step."""

from __future__ import annotations

from textual.widget import Widget


def reveal(widget: Widget) -> None:
    """Show ``widget`` and give it the keys now. ``Widget.focus`` takes effect on a later
    turn of the message loop, so keys already queued behind the one that opened the input
    (a paste, a fast typist, keys sent over ssh in one burst) would reach the widget behind
    it and fire its bindings: the ``r`` of a filter word would re-spawn an agent."""
    widget.display = True
    widget.screen.set_focus(widget)
