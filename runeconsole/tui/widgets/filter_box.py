"""The filter line at the foot of the console: ``/`` opens it, typing narrows the pane
shown, enter keeps the filter (the line stays in sight while it holds text), escape
clears it. It tells the app with messages; which pane a filter applies to is the app's
business.

Closed, the line is hidden (``visibility``), not taken out of the screen's arrangement
(``display``): Textual numbers the paint order of the screen's widgets by their place in
it, so a line coming and going renumbered every other widget, and a layout that found
them all "moved" redrew the whole screen on ``/`` and escape, not the one line.
"""

from __future__ import annotations

from contextlib import ExitStack
from functools import partial

from textual.message import Message
from textual.widgets import Input

FILTER_FRAME = 0.002  # seconds the screen waits for the pane's rows after a key


class FilterBox(Input):
    DEFAULT_CSS = """
    FilterBox {
        visibility: hidden;
        layer: filter;
        dock: bottom;
        height: 1;
        margin-bottom: 1;
        border: none;
        padding: 0 1;
        background: $boost;
    }
    FilterBox:focus {
        border: none;
        background: $panel;
    }
    """

    class Filter(Message):
        """The text to filter by changed (empty: show everything)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Done(Message):
        """The operator is done with the line (enter, or cleared): back to the table."""

    def __init__(self) -> None:
        super().__init__(placeholder="filter… (enter keeps it, esc clears)", id="filter")

    def open(self) -> None:
        """Show the line and give it the keys now (not on a later turn of the message
        loop, as ``focus`` does: keys queued behind ``/`` would reach the table and fire
        its bindings, the ``r`` of a filter word re-spawning an agent)."""
        self.visible = True
        self.screen.set_focus(self)

    def clear_filter(self) -> bool:
        """Empty and hide the line, quietly; True when there was something to clear (the
        caller unfilters its pane at once: a pane change must not wait for a message)."""
        if not (self.value or self.visible):
            return False
        with self.prevent(Input.Changed):
            self.value = ""
        self.visible = False
        return True

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        # The typed character and the pane it filters are drawn in one frame: without
        # this the character's frame goes first and the pane's waits a frame period. A
        # batch ended by a timer, not ``delay_update``, which repaints the whole screen
        # as it ends: a second frame of every line after each character.
        batch = ExitStack()
        batch.enter_context(self.app.batch_update())
        self.set_timer(FILTER_FRAME, partial(self._draw, batch))
        self.post_message(self.Filter(event.value))

    def _draw(self, batch: ExitStack) -> None:
        """The batch over: the frame is drawn now. The end of a batch prompts only the
        app, and the screen would wait for whatever next woke it (a timer, the cursor's
        blink) to draw what changed in it."""
        batch.close()
        if self.is_attached:  # not a console closing meanwhile
            self.screen.check_idle()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        # A filter in force stays in sight (the status bar is cut at 80 columns).
        self.visible = bool(event.value)
        self.post_message(self.Done())
