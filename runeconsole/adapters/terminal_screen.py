"""A terminal's output replayed into the screen it draws (pyte, a VT100 emulator).

``claude logs ID`` prints a background session's recent terminal output as the program
wrote it: cursor moves, colours, clears. Printed as it is, it would move the reader's own
cursor and clear their screen; stripped of escapes, its words land in the wrong places.
Replayed on an emulated screen of the session's size, it becomes the lines it showed,
each cell with its colours, which the console draws and the CLI prints as text.

Its line breaks return to the line's start without moving down: Claude Code places every
line with cursor moves (its logo's second line follows ``\n\x1b[1B``, one row down), so
each is replayed as a carriage return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyte

WIDTH, HEIGHT = 200, 50  # the terminal Claude Code gives a background session
MAX_INPUT = 4 * 1024 * 1024  # the end of a longer output is what the screen shows anyway


@dataclass(frozen=True)
class Span:
    """A run of cells of one style: colours are pyte's names (``red``) or ``rrggbb``."""

    text: str
    fg: str = "default"
    bg: str = "default"
    bold: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False


def _style(char: pyte.screens.Char) -> tuple[str, str, bool, bool, bool, bool]:
    return (char.fg, char.bg, char.bold, char.italics, char.underscore, char.reverse)


def replay(output: str, width: int = WIDTH, height: int = HEIGHT) -> list[list[Span]]:
    """The screen ``output`` leaves, line by line (trailing blank lines dropped)."""
    import pyte  # about 20 ms: when a background session's screen is read only

    screen = pyte.Screen(width, height)
    stream = pyte.Stream(screen)
    stream.feed(output[-MAX_INPUT:].replace("\r\n", "\r").replace("\n", "\r"))
    lines: list[list[Span]] = []
    for y in range(height):
        row = screen.buffer[y]
        spans: list[Span] = []
        text: list[str] = []
        style: tuple[str, str, bool, bool, bool, bool] | None = None
        for x in range(width):
            char = row[x]
            if style is not None and _style(char) != style:
                spans.append(Span("".join(text), *style))
                text = []
            style = _style(char)
            text.append(char.data)
        if style is not None:
            spans.append(Span("".join(text).rstrip(), *style))
        lines.append([span for span in spans if span.text])
    while lines and not "".join(span.text for span in lines[-1]).strip():
        lines.pop()
    return lines


def plain(lines: list[list[Span]]) -> str:
    """The screen as text: each line's characters, trailing spaces dropped."""
    return "\n".join("".join(span.text for span in line).rstrip() for line in lines)
