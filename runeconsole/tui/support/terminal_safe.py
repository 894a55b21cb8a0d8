"""The last step before the terminal: no control character in any text drawn.

Cells, windows and notifications show text other processes wrote; Rich strips only a few
control codes from it, and an escape sequence that reached the terminal would be acted
on. Every line the console draws passes this filter (Textual's line filters run on each
rendered line); a control character has no width, so dropping it leaves every line its
width.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from runeconsole.core.control import CONTROL


class NoControlCharacters(LineFilter):
    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        search = CONTROL.search
        if not any(search(segment.text) for segment in segments):
            return segments
        return [
            segment._replace(text=CONTROL.sub("", segment.text))
            if search(segment.text)
            else segment
            for segment in segments
        ]
