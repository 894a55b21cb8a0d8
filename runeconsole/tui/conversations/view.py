"""The conversation drawn on Textual's Line API: a ``ScrollView`` whose ``render_line``
draws only the lines on screen. A turn's lines (``layout.Drawer``) are drawn the first
time one of them is on screen and kept; until then the turn counts for an estimate of its
height (``layout.estimate``), so 10,000 turns are measured at once. A turn drawn taller
or shorter than estimated moves only what is below it: the line at the top of the screen
stays where it is (it belongs to that turn or to one above it).

A cursor on one turn (``▌`` beside it): ``j``/``k`` move it turn by turn, ↑/↓ scroll a
line, enter opens or closes it (a tool call's input and result, a long text). ``/``'s
search marks its words and ``n``/``N`` go to the next and previous turn holding them;
``[``/``]`` the previous and next of the operator's own prompts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from runeconsole.services.conversations.reading import merge
from runeconsole.services.conversations.turns import OPERATOR, TOOL, Turn
from runeconsole.tui.conversations.layout import Drawer, estimate, haystack, opens

GUTTER = 2
KEPT_STRIPS = 4000
READ_AHEAD_AFTER = 0.03  # seconds after a paint: the pages around it drawn
MATCH = Style(bgcolor="yellow", color="black")
CURSOR = Style(color="magenta", bold=True)


def highlight(strip: Strip, needle: str, style: Style) -> Strip:
    """``strip`` with each occurrence of ``needle`` (any case) in ``style``."""
    text = strip.text
    lower, found, cuts = text.lower(), 0, []
    while needle and (found := lower.find(needle, found)) >= 0:
        start = cell_len(text[:found])
        cuts += [start, start + cell_len(text[found : found + len(needle)])]
        found += len(needle)
    if not cuts:
        return strip
    pieces = strip.divide(cuts)
    return Strip.join(
        piece.apply_style(style) if number % 2 else piece for number, piece in enumerate(pieces)
    )


class ConversationView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    ConversationView {
        background: $surface;
        overflow-y: scroll;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
    }
    """
    BINDINGS = [
        Binding("j", "turn(1)", "Next turn", show=False),
        Binding("k", "turn(-1)", "Previous turn", show=False),
        Binding("down", "line(1)", "Down", show=False),
        Binding("up", "line(-1)", "Up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("pageup,b", "page(-1)", "Page up", show=False),
        Binding("home,g", "edge(0)", "Top", show=False),
        Binding("end,G", "edge(1)", "Bottom", show=False),
        Binding("enter", "open", "Open"),
        Binding("n", "match(1)", "Next hit", show=False),
        Binding("N", "match(-1)", "Previous hit", show=False),
        Binding("right_square_bracket", "prompt(1)", "Your next prompt", show=False),
        Binding("left_square_bracket", "prompt(-1)", "Your previous prompt", show=False),
    ]

    class CursorMoved(Message):
        def __init__(self, view: ConversationView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.turns: list[Turn] = []
        self.blocks: list[list[Strip] | None] = []
        self.heights: list[int] = []
        self.tops: list[int] = [0]
        self.opened: set[tuple[str, int, int]] = set()
        self.cursor = 0
        self.search = ""
        self.stick = True  # at the bottom: new turns keep it there
        self.drawn_width = 0
        self.drawer: Drawer | None = None
        self.strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(KEPT_STRIPS)
        self.haystacks: dict[int, str] = {}
        self.pending: tuple[str, int] | None = None  # a (path, offset) to land on when read
        self.base_style: Style | None = None
        self.ahead_planned = False

    # -- measuring --------------------------------------------------------------------

    @property
    def room(self) -> int:
        """Columns a turn is drawn in (the gutter left of them)."""
        return max(20, self.scrollable_content_region.width - GUTTER)

    @property
    def page_height(self) -> int:
        return max(1, self.scrollable_content_region.height)

    def _measure(self) -> None:
        width = self.room
        self.drawn_width = width
        self.heights = [
            len(block) if block is not None else estimate(turn, width, turn.key in self.opened)
            for turn, block in zip(self.turns, self.blocks, strict=True)
        ]
        self._sum()

    def _sum(self) -> None:
        self.tops = [0, *accumulate(self.heights)]
        self.virtual_size = Size(self.room + GUTTER, self.tops[-1])

    def _draw(self, index: int) -> list[Strip]:
        """Turn ``index``'s lines, drawn now if they were not; what moved below it moves."""
        block = self.blocks[index]
        if block is not None:
            return block
        if self.drawer is None:
            self.drawer = Drawer(self.app.console)
        turn = self.turns[index]
        block = self.drawer.draw(turn, self.drawn_width, turn.key in self.opened)
        if not block:
            block = [Strip.blank(0)]
        self.blocks[index] = block
        if len(block) != self.heights[index]:
            delta = len(block) - self.heights[index]
            self.heights[index] = len(block)
            tops = self.tops
            for at in range(index + 1, len(tops)):
                tops[at] += delta
            self.virtual_size = Size(self.room + GUTTER, tops[-1])
        return block

    def turn_at(self, line: int) -> int:
        return max(0, min(len(self.turns) - 1, bisect_right(self.tops, line) - 1))

    def _draw_lines(self, first: int, last: int) -> None:
        """Every turn with a line in ``first..last`` drawn (so their heights are known)."""
        if not self.turns:
            return
        index = self.turn_at(first)
        while index < len(self.turns) and self.tops[index] <= last:
            self._draw(index)
            index += 1

    def _draw_end(self) -> None:
        """The turns of the last page drawn, from the end up."""
        filled, index = 0, len(self.turns) - 1
        while index >= 0 and filled < self.page_height:
            filled += len(self._draw(index))
            index -= 1

    # -- the turns --------------------------------------------------------------------

    def show(self, turns: list[Turn], *, land: tuple[str, int] | None = None) -> None:
        """Show ``turns`` (every turn so far), instead of what was shown. The cursor's turn
        stays where it was on screen; at the bottom, the view stays at the bottom;
        ``land``: the turn at that (path, offset) is shown instead (a search hit's)."""
        anchor = self._anchor()
        self.turns = list(turns)
        self.blocks = [None] * len(self.turns)
        self.haystacks.clear()
        self.strips.clear()
        if land is not None:
            self.pending = land
        if not self.is_mounted or self.scrollable_content_region.width <= 0:
            return
        self._measure()
        self._restore(anchor)

    def _anchor(self) -> tuple[tuple[str, int, int], int, int] | None:
        """The cursor's turn, where its top is on screen, and where the cursor is."""
        if not self.turns or self.stick:
            return None
        cursor = self.turns[min(self.cursor, len(self.turns) - 1)]
        top = self.turn_at(int(self.scroll_offset.y))
        return cursor.key, self.tops[top] - int(self.scroll_offset.y), top

    def _restore(self, anchor: tuple[tuple[str, int, int], int, int] | None) -> None:
        if self.pending is not None and self._land(*self.pending):
            self.pending = None
            return
        if anchor is None:
            self.cursor = max(0, len(self.turns) - 1)
            self._to_bottom()
            return
        key, _, _ = anchor
        found = next((i for i, turn in enumerate(self.turns) if turn.key == key), None)
        if found is None:
            self._to_bottom()
            return
        self.cursor = found
        self._reveal(found, top=True)

    def _land(self, path: str, offset: int) -> bool:
        found = next(
            (i for i, t in enumerate(self.turns) if t.offset == offset and t.path == path), None
        )
        if found is None:
            return False
        self.move_to(found, center=True)
        return True

    def add(self, batch: Iterable[Turn]) -> None:
        """Turns read since (new ones, and ones that changed): at the bottom, the view
        stays at the bottom; otherwise what is on screen stays."""
        batch = list(batch)
        if not batch:
            return
        at_bottom = self.stick or self.scroll_offset.y >= self.max_scroll_y
        on_last = self.cursor >= len(self.turns) - 1  # the cursor follows the last turn
        known = {turn.key: i for i, turn in enumerate(self.turns)}
        appended = all(turn.key in known or not turn.parent_tool_use_id for turn in batch)
        if not appended:  # a subagent's turns go in under their call: measured again
            self.stick = at_bottom
            self.show(merge(self.turns, batch))
            return
        self.strips.clear()
        for turn in batch:
            index = known.get(turn.key)
            if index is None:
                self.turns.append(turn)
                self.blocks.append(None)
                self.heights.append(estimate(turn, self.drawn_width, turn.key in self.opened))
            else:
                self.turns[index] = turn
                self.blocks[index] = None
                self.haystacks.pop(index, None)
        if self.drawn_width:
            self._sum()
        if on_last:
            self.cursor = len(self.turns) - 1
        if at_bottom:
            self._to_bottom()
        self.refresh()
        if self.pending is not None and self._land(*self.pending):
            self.pending = None

    def on_resize(self) -> None:
        if not self.turns or self.room == self.drawn_width:
            if self.turns and not self.tops[-1]:
                self._measure()
            return
        anchor = self._anchor()
        self.blocks = [None] * len(self.turns)
        self.strips.clear()
        self._measure()
        self._restore(anchor)

    # -- drawing ----------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines of one update: the widget's own style worked out once for all of them
        (it is asked for each line otherwise); then the pages around drawn ahead."""
        self.base_style = self.rich_style
        lines = super().render_lines(crop)
        if not self.ahead_planned:
            self.ahead_planned = True
            self.set_timer(READ_AHEAD_AFTER, self._draw_ahead)
        return lines

    def _draw_ahead(self) -> None:
        """The page above and the page below the screen drawn, in an idle moment: a key
        finds them ready."""
        self.ahead_planned = False
        if not self.turns or not self.drawn_width:
            return
        first, height = int(self.scroll_offset.y), self.page_height
        self._draw_lines(first + height, first + 2 * height)
        top = self.turn_at(first)
        before = self.tops[top]
        self._draw_lines(max(0, before - height), before - 1)
        if self.tops[top] != before:  # what is on screen stays where it is
            self._scroll(first + self.tops[top] - before)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.base_style or self.rich_style
        if not self.turns or not self.drawn_width:
            return Strip.blank(width, base)
        line = int(self.scroll_offset.y) + y
        if line >= self.tops[-1]:
            return Strip.blank(width, base)
        index = self.turn_at(line)
        while self.blocks[index] is None:
            self._draw(index)
            index = self.turn_at(line)
            if line >= self.tops[-1]:
                return Strip.blank(width, base)
        part = line - self.tops[index]
        key = (index, part, index == self.cursor)
        strip = self.strips.get(key)
        if strip is None:
            strip = self._strip(index, part, width)
            self.strips[key] = strip
        return strip.apply_style(base)

    def _strip(self, index: int, part: int, width: int) -> Strip:
        block = self.blocks[index] or []
        content = block[part] if part < len(block) else Strip.blank(0)
        if self.search:
            content = highlight(content, self.search, MATCH)
        if index == self.cursor:
            gutter = Strip([*Text("▌ ", CURSOR).render(self.app.console, end="")])
        else:
            gutter = Strip.blank(GUTTER)
        return Strip.join([gutter, content]).adjust_cell_length(width)

    # -- moving -----------------------------------------------------------------------

    def _scroll(self, y: int) -> None:
        self.scroll_to(y=max(0, y), animate=False, immediate=True)

    def _to_bottom(self) -> None:
        self._draw_end()
        self.stick = True
        self._scroll(max(0, self.tops[-1] - self.page_height))
        self.refresh()

    def _reveal(self, index: int, *, center: bool = False, top: bool = False) -> None:
        """Scroll so turn ``index`` is on screen (``center``: a third down; ``top``: at
        the top)."""
        height = self.page_height
        if center:
            self._draw_lines(max(0, self.tops[index] - height), self.tops[index] + height)
            target = self.tops[index] - height // 3
        elif top:
            self._draw_lines(self.tops[index], self.tops[index] + height)
            target = self.tops[index]
        else:
            self._draw(index)
            first = int(self.scroll_offset.y)
            if self.tops[index] < first:
                target = self.tops[index]
            elif self.tops[index + 1] > first + height:
                target = min(self.tops[index], self.tops[index + 1] - height)
            else:
                return
        self._scroll(target)
        self.stick = self.scroll_offset.y >= self.max_scroll_y and index == len(self.turns) - 1

    def move_to(self, index: int, *, center: bool = False) -> None:
        if not self.turns:
            return
        self.cursor = max(0, min(index, len(self.turns) - 1))
        self.strips.clear()
        self._reveal(self.cursor, center=center)
        self.refresh()
        self.post_message(self.CursorMoved(self))

    def _cursor_on_screen(self) -> None:
        """After a scroll: the cursor onto the screen if it went off it."""
        first = int(self.scroll_offset.y)
        last = first + self.page_height
        if self.turns and not (first <= self.tops[self.cursor] < last):
            index = self.turn_at(first)
            if self.tops[index] < first and index + 1 < len(self.turns):
                index += 1 if self.tops[index + 1] < last else 0
            self.cursor = index
            self.strips.clear()
            self.post_message(self.CursorMoved(self))
        self.stick = self.scroll_offset.y >= self.max_scroll_y
        self.refresh()

    def action_turn(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_line(self, step: int) -> None:
        self._scroll(int(self.scroll_offset.y) + step)
        self._cursor_on_screen()

    def action_page(self, direction: int) -> None:
        step = max(1, self.page_height - 1)
        target = max(0, int(self.scroll_offset.y) + direction * step)
        self._draw_lines(target, target + self.page_height)
        self._scroll(target)
        self._cursor_on_screen()

    def action_edge(self, end: int) -> None:
        if not self.turns:
            return
        if end:
            self.cursor = len(self.turns) - 1
            self.strips.clear()
            self._to_bottom()
            self.post_message(self.CursorMoved(self))
        else:
            self.move_to(0)

    def _redraw(self, index: int) -> None:
        """Turn ``index`` drawn again (opened or closed): what is below it moves."""
        turn = self.turns[index]
        self.blocks[index] = None
        self.heights[index] = estimate(turn, self.drawn_width, turn.key in self.opened)
        self._sum()
        self.strips.clear()
        self._draw(index)
        self.refresh()

    def action_open(self) -> None:
        """Enter: the cursor's turn opened (a call's input and result) or closed."""
        if not self.turns:
            return
        turn = self.turns[self.cursor]
        if not opens(turn):
            return
        self.opened ^= {turn.key}
        self._redraw(self.cursor)
        self._reveal(self.cursor)

    def _haystack(self, index: int) -> str:
        found = self.haystacks.get(index)
        if found is None:
            found = self.haystacks[index] = haystack(self.turns[index])
        return found

    def find(self, text: str, *, step: int = 1, here: bool = True) -> bool:
        """Mark ``text`` and go to the next turn holding it (from the cursor's own, with
        ``here``); round the end to the start. True when found."""
        needle = text.lower()
        if needle != self.search:
            self.search = needle
            self.strips.clear()
            self.refresh()
        if not needle or not self.turns:
            return False
        count = len(self.turns)
        first = 0 if here else 1
        for distance in range(first, count + first):
            index = (self.cursor + step * distance) % count
            if needle in self._haystack(index):
                turn = self.turns[index]
                inside = turn.kind == TOOL and needle not in turn.subject.lower()
                if inside and turn.key not in self.opened:  # opened to show it
                    self.opened.add(turn.key)
                    self.blocks[index] = None
                    self._redraw(index)
                self.move_to(index, center=True)
                return True
        return False

    def action_match(self, step: int) -> None:
        if not self.search:
            self.notify("/ to search", timeout=2)
        elif not self.find(self.search, step=step, here=False):
            self.notify(f"{self.search!r} is nowhere in this conversation", timeout=3)

    def action_prompt(self, step: int) -> None:
        index = self.cursor + step
        while 0 <= index < len(self.turns):
            if self.turns[index].speaker == OPERATOR:
                self.move_to(index, center=True)
                return
            index += step
        where = "after" if step > 0 else "before"
        self.notify(f"no prompt of yours {where} this one", timeout=2)

    def cursor_turn(self) -> Turn | None:
        return self.turns[self.cursor] if self.turns else None
