"""A replayed terminal screen (``adapters.terminal_screen``) as Rich text: each run of
cells keeps its colours and weight, so a background session's screen looks as it did."""

from __future__ import annotations

from functools import lru_cache

from rich.style import Style
from rich.text import Text

from runeconsole.adapters.terminal_screen import Span

NAMED = {"brown": "yellow"}  # pyte's name for ANSI colour 3


def _colour(name: str) -> str | None:
    if name == "default":
        return None
    if len(name) == 6 and all(c in "0123456789abcdefABCDEF" for c in name):
        return f"#{name}"
    return NAMED.get(name, name)


@lru_cache(maxsize=256)
def _style(fg: str, bg: str, bold: bool, italic: bool, underline: bool, reverse: bool) -> Style:
    try:
        return Style(
            color=_colour(fg),
            bgcolor=_colour(bg),
            bold=bold or None,
            italic=italic or None,
            underline=underline or None,
            reverse=reverse or None,
        )
    except Exception:  # a colour Rich does not know: the text, unstyled
        return Style()


def screen_text(lines: list[list[Span]]) -> Text:
    text = Text(no_wrap=True, overflow="crop", end="")
    for number, line in enumerate(lines):
        if number:
            text.append("\n")
        for span in line:
            style = _style(span.fg, span.bg, span.bold, span.italic, span.underline, span.reverse)
            text.append(span.text, style)
    return text
