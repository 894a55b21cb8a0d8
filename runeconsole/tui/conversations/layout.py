"""A conversation's turns as screen lines: one ``Block`` of ``Strip``s per turn, drawn
once (at a width) and kept; what a turn will take before it is drawn is estimated
(``estimate``), cheaply, so a transcript of 10,000 turns is measured at once and only the
turns on screen are ever drawn.

- a prompt: ``▶ you (say)`` (the operator's), ``▶ user``, ``▶ system`` (a task
  notification…) with its time, then its text; the assistant's text: Markdown (Rich's,
  drawn once per turn); both cut after ``FOLD`` lines until opened (enter);
- a tool call: ONE line, ``● Bash  echo hi`` (red: it failed; dim: no result yet); opened
  (enter), its input and its result below it (a turn's one-line forms, shared with the
  detail window: ``tui/cells/turn_cells.py``);
- a compaction, a resumption: a separator line across the width; a place that could not
  be read: ``⚠`` and why;
- a subagent's turns indented under the call that started it.
"""

from __future__ import annotations

import json
import math
import re

from rich.console import Console, RenderableType
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from runeconsole.core.control import printable
from runeconsole.services.conversations.turns import (
    COMPACTION,
    OPERATOR,
    PROMPT,
    RESUMPTION,
    TEXT,
    TOOL,
    UNREADABLE,
    Turn,
)
from runeconsole.tui.cells.turn_cells import (
    DIM,
    ERROR,
    OPERATOR_STYLE,
    prompt_header,
    shown,
    tool_line,
)

FOLD = 40  # lines of a prompt or a text shown until it is opened
INPUT_LINES = 40  # lines of a tool call's input shown when opened
RESULT_LINES = 400  # lines of its result shown when opened
INDENT = 4  # columns a subagent's turns are indented by
MAX_DEPTH = 4
MARKDOWN_SIGNS = frozenset("#*`[|>~")
EMPHASIS = re.compile(r"(?:^|\s)__?\S")  # _emphasis_, __strong__ (not snake_case)

SEPARATOR = Style(color="yellow")
RESUMED = Style(color="blue", bold=True)


def indent_of(turn: Turn) -> int:
    return INDENT * min(max(turn.depth, 0), MAX_DEPTH)


def opens(turn: Turn) -> bool:
    """Whether enter shows more of this turn (a tool call; a prompt or text cut short)."""
    return turn.kind in (TOOL, PROMPT, TEXT)


def input_lines(turn: Turn) -> list[str]:
    """A call's input as shown opened: a command as it is, anything else as JSON."""
    given = turn.tool_input or {}
    command = given.get("command")
    if isinstance(command, str) and len(given) <= 2:
        text = command
    else:
        text = json.dumps(given, indent=2, ensure_ascii=False, default=str)
    return shown(text).splitlines() or [""]


def _cut(lines: list[str], limit: int) -> tuple[list[str], int]:
    return (lines, 0) if len(lines) <= limit else (lines[:limit], len(lines) - limit)


def separator(label: str, width: int, style: Style) -> Text:
    label = f" {' '.join(printable(label).split())} "
    left = 3
    right = max(3, width - left - len(label))
    return Text.assemble(("─" * left, style), (label, style), ("─" * right, style))


def looks_like_markdown(text: str) -> bool:
    """Whether Rich's Markdown would draw ``text`` other than as wrapped paragraphs (the
    plain ones are wrapped directly: four times quicker)."""
    if MARKDOWN_SIGNS.intersection(text) or ("_" in text and EMPHASIS.search(text)):
        return True
    for line in text.splitlines():
        head = line.lstrip()[:3]
        if head[:2] in ("- ", "+ ", "* ") or (head[:1].isdigit() and "." in head):
            return True
        if line.startswith("    ") or line.startswith("\t"):
            return True
    return False


def _wrapped_height(text: str, width: int) -> int:
    width = max(1, width)
    return sum(max(1, math.ceil(len(line) / width)) for line in text.splitlines()) or 1


def estimate(turn: Turn, width: int, opened: bool) -> int:
    """About how many lines ``draw`` gives this turn (exact for one-line turns)."""
    room = max(10, width - indent_of(turn))
    if turn.kind == TOOL:
        if not opened:
            return 1
        given = min(len(input_lines(turn)), INPUT_LINES + 1)
        result = min(len(turn.result.splitlines()) or 1, RESULT_LINES + 1)
        return 1 + given + result
    if turn.kind in (PROMPT, TEXT):
        body = _wrapped_height(turn.text, room - 2)
        if turn.kind == TEXT and looks_like_markdown(turn.text):
            body += turn.text.count("\n\n")  # Markdown spaces its paragraphs
        lines = body if opened else min(body, FOLD + 1)
        return lines + (2 if turn.kind == PROMPT else 1)
    return 1


class Drawer:
    """Draws turns into strips with the console's own ``Console`` (its styles)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def _lines(self, renderable: RenderableType, width: int) -> list[Strip]:
        options = self.console.options.update_width(max(1, width))
        return [
            Strip(line)
            for line in self.console.render_lines(renderable, options, pad=False, new_lines=False)
        ]

    def _text_lines(self, text: Text, width: int) -> list[Strip]:
        return self._lines(text, width)

    def draw(self, turn: Turn, width: int, opened: bool) -> list[Strip]:
        """The turn's lines at ``width`` (indented by its depth); ``opened``: all of it."""
        pad = indent_of(turn)
        room = max(10, width - pad)
        lines: list[Strip]
        if turn.kind == TOOL:
            lines = self._tool(turn, room, opened)
        elif turn.kind == PROMPT:
            lines = self._crop(prompt_header(turn), room)
            said = Text(shown(turn.text), OPERATOR_STYLE if turn.speaker == OPERATOR else "")
            lines += self._folded(self._shifted(self._text_lines(said, room - 2), 2), opened)
            lines.append(Strip.blank(0))
        elif turn.kind == TEXT:
            text = shown(turn.text)
            body: RenderableType = Text(text)
            if looks_like_markdown(text):
                # Rich's Markdown and markdown-it (30-60 ms) on the first conversation
                # drawn, not as the console starts (benchmarks/cold_start.py)
                from rich.markdown import Markdown

                body = Markdown(text)
            body_lines = self._shifted(self._lines(body, room - 2), 2)
            lines = self._folded(body_lines, opened)
            lines.append(Strip.blank(0))
        elif turn.kind == COMPACTION:
            first = turn.text.strip().splitlines()[0] if turn.text.strip() else "compacted"
            lines = self._crop(separator(f"compacted · {first}", room, SEPARATOR), room)
        elif turn.kind == RESUMPTION:
            first = turn.text.strip().splitlines()[0] if turn.text.strip() else "resumed"
            lines = self._crop(separator(first, room, RESUMED), room)
        elif turn.kind == UNREADABLE:
            why = " ".join(printable(turn.text or turn.note or "unreadable").split())
            lines = self._crop(Text.assemble(("⚠ ", ERROR), (why, ERROR)), room)
        else:
            lines = self._crop(Text(printable(turn.text), DIM), room)
        return self._shifted(lines, pad) if pad else lines

    def _crop(self, text: Text, width: int) -> list[Strip]:
        text = text.copy()
        text.no_wrap = True
        text.overflow = "ellipsis"
        text.truncate(width, overflow="ellipsis")
        return [Strip(list(text.render(self.console, end="")))]

    def _shifted(self, lines: list[Strip], columns: int) -> list[Strip]:
        pad = Strip.blank(columns)
        return [Strip.join([pad, line]) for line in lines]

    def _folded(self, lines: list[Strip], opened: bool) -> list[Strip]:
        if opened or len(lines) <= FOLD + 1:
            return lines
        more = len(lines) - FOLD
        hint = Text(f"  … {more} more lines (enter)", DIM)
        return [*lines[:FOLD], *self._crop(hint, 60)]

    def _tool(self, turn: Turn, width: int, opened: bool) -> list[Strip]:
        lines = self._crop(tool_line(turn), width)
        if not opened:
            return lines
        given, more = _cut(input_lines(turn), INPUT_LINES)
        if more:
            given.append(f"… {more} more lines")
        bar = self._lead("  │ ")
        lines += [
            Strip.join([bar, line])
            for line in self._text_lines(Text("\n".join(given), DIM), width - 4)
        ]
        result = shown(turn.result).splitlines() if turn.result else []
        if not result:
            result = ["(no result yet)"] if not turn.is_error else ["(failed)"]
        kept, more = _cut(result, RESULT_LINES)
        if more:
            kept.append(f"… {more} more lines")
        said = self._text_lines(Text("\n".join(kept), ERROR if turn.is_error else ""), width - 4)
        first, rest = self._lead("  ⎿ "), Strip.blank(4)
        return lines + [
            Strip.join([first if n == 0 else rest, line]) for n, line in enumerate(said)
        ]

    def _lead(self, text: str) -> Strip:
        return Strip(list(Text(text, DIM).render(self.console, end="")))


def haystack(turn: Turn) -> str:
    """What ``/`` searches in a turn (lower case)."""
    parts = [turn.text, turn.subject, turn.result]
    if turn.kind == TOOL and turn.tool_input:
        parts.append("\n".join(input_lines(turn)))
    return "\n".join(parts).lower()
