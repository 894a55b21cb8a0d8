"""A ``Static`` that leaves itself alone when given the content it already shows.

Textual's ``Static.update`` lays the screen out again and repaints it whether or not the
content changed, and whether or not the widget is on screen. The Merge queue pane writes
its heading and its entry's detail on every rescan (every 5 s, its tab shown or not) and
the Permissions pane its rules' title: with nothing changing, each was a layout and a
whole frame of an idle console (at 10,000 agents, 0.2 layouts and 0.4 frames a second
beside the clock's one frame).
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static

from runeconsole.tui.widgets.table_cells import fingerprint


class SteadyStatic(Static):
    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        if fingerprint(content) != fingerprint(self.content):
            super().update(content, layout=layout)
