"""The review's diff: a ``ScrollView`` drawing only the lines on screen (Textual's Line
API: ``render_line``), so a 20,000-line file is 20,000 rows of data and never 20,000
widgets. A cursor line (comments go on it), ``n``/``p`` to the next or previous file,
``]``/``[`` hunks, a search whose matches are marked (``.``/``,`` next and previous),
and wrapping (``w``): a wrapped row takes as many screen lines as it needs, found by
bisecting the running total of row heights.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import accumulate
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from runeconsole.tui.review.document import COMMIT, FILE, TITLE, Document
from runeconsole.tui.review.painter import MATCH, Painter

KEPT_STRIPS = 2000
READ_AHEAD_AFTER = 0.03  # seconds after a paint: the lines a key will want next, drawn
HEADINGS = frozenset({FILE, TITLE, COMMIT})  # drawn from the left edge, with no gutter


class DiffView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        scrollbar-size-horizontal: 1;
    }
    """
    BINDINGS = [
        Binding("j,down", "move(1)", "Down", show=False),
        Binding("k,up", "move(-1)", "Up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("pageup,b", "page(-1)", "Page up", show=False),
        Binding("home,g", "edge(0)", "Top", show=False),
        Binding("end,G", "edge(1)", "Bottom", show=False),
        Binding("n", "file(1)", "File"),
        Binding("p", "file(-1)", "Previous file", show=False),
        Binding("right_square_bracket", "hunk(1)", "Hunk"),
        Binding("left_square_bracket", "hunk(-1)", "Previous hunk", show=False),
        Binding("w", "toggle_wrap", "Wrap", show=False),
        Binding("full_stop", "match(1)", "Next match", show=False),
        Binding("comma", "match(-1)", "Prev match", show=False),
        Binding("h,left", "sideways(-8)", "Left", show=False),
        Binding("l,right", "sideways(8)", "Right", show=False),
    ]

    wrap: reactive[bool] = reactive(False, init=False)
    search: reactive[str] = reactive("", init=False)

    class CursorMoved(Message):
        def __init__(self, view: DiffView, row: int) -> None:
            super().__init__()
            self.view = view
            self.row = row

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.document: Document | None = None
        self.painter: Painter | None = None
        self.cursor = 0
        self.blank = False  # a review being read: nothing drawn until it is shown
        self._base_style: Style | None = None
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(KEPT_STRIPS)
        # what the kept strips were drawn under: width, scroll x, wrap, search, base style
        self._drawn_under: tuple[int, int, bool, str, Style] | None = None
        self._tops: list[int] = []  # wrapped: the first screen line of each row
        self._ahead: list[int] = []  # screen lines of the pages still to draw ahead
        self._planned: list[int] = []  # the pages last planned (a cursor move plans none)

    # -- the document -------------------------------------------------------------------

    def show(self, document: Document, cursor: int = 0) -> None:
        if document is not self.document:  # the same one again keeps its drawn lines
            self.document = document
            self.painter = Painter(document)
            self._strips.clear()
            self._planned = []  # what was drawn ahead is gone
            self._drawn_under = None
        self.cursor = max(0, min(cursor, len(document) - 1))
        self.blank = False
        self._measure()
        self._reveal(self.cursor, center=True)
        self.refresh()
        self.post_message(self.CursorMoved(self, self.cursor))

    def clear(self) -> None:
        """Nothing shown (a review being read); its document and lines are kept, to be
        shown again at once if the next review is the same."""
        self.cursor = 0
        self.blank = True
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    @property
    def _content_width(self) -> int:
        gutter = self.painter.gutter_width if self.painter else 0
        return max(1, self.scrollable_content_region.width - gutter)

    def _measure(self) -> None:
        """The virtual size: one line per row, or each row's wrapped height."""
        document, painter = self.document, self.painter
        if document is None or painter is None:
            self.virtual_size = Size(0, 0)
            return
        if self.wrap:
            code, whole = self._content_width, max(1, self.scrollable_content_region.width)
            heights = [
                max(1, math.ceil(cell_len(row[1]) / (whole if row[0] in HEADINGS else code)))
                for row in document.rows
            ]
            self._tops = [0, *accumulate(heights)]
            self.virtual_size = Size(self.scrollable_content_region.width, self._tops[-1])
        else:
            self._tops = []
            widest = max(map(len, (row[1] for row in document.rows)), default=0)  # about
            self.virtual_size = Size(painter.gutter_width + widest + 2, len(document))

    def on_resize(self) -> None:
        if self.wrap:
            self._measure()
        self._reveal(self.cursor)

    def watch_wrap(self) -> None:
        self._strips.clear()
        self._planned = []  # what was drawn ahead is gone
        self.scroll_to(x=0, animate=False, immediate=True)
        self._measure()
        self._reveal(self.cursor, center=True)
        self.refresh()

    def watch_search(self) -> None:
        self._strips.clear()
        self._planned = []  # what was drawn ahead is gone
        self.refresh()

    # -- screen lines and rows ----------------------------------------------------------

    def _top_of(self, row: int) -> int:
        return self._tops[row] if self.wrap and self._tops else row

    def _height_of(self, row: int) -> int:
        return self._tops[row + 1] - self._tops[row] if self.wrap and self._tops else 1

    def _row_at(self, line: int) -> tuple[int, int]:
        """The row drawn on screen line ``line`` (of the whole document), and which of its
        wrapped parts."""
        if not (self.wrap and self._tops):
            return line, 0
        row = bisect_right(self._tops, line) - 1
        return row, line - self._tops[row]

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines of one update: the widget's own style worked out once for all of them
        (it is asked for each line otherwise, ~0.5 ms a time)."""
        self._base_style = self.rich_style
        lines = super().render_lines(crop)
        self._plan_read_ahead()
        return lines

    # -- drawing ahead ------------------------------------------------------------------

    def _plan_read_ahead(self) -> None:
        """Once the screen is drawn, the pages a key goes to next (page down, page up, the
        next file's first page) are drawn in idle moments, a page at a time, so the key
        finds its lines highlighted and laid out."""
        document = self.document
        if document is None or self.blank:
            self._ahead, self._planned = [], []
            return
        height = max(1, self.scrollable_content_region.height)
        first, step = int(self.scroll_offset.y), max(1, height - 1)  # as action_page steps
        pages = [first + step, max(0, first - step)]
        following = document.next_start(document.files, self.cursor)
        if following is not None:
            pages.append(self._top_of(following))
        if pages == self._planned:
            return  # the same screen drawn again: its pages are drawn or on their way
        idle = not self._ahead
        self._ahead, self._planned = pages, pages
        if idle:
            self.set_timer(READ_AHEAD_AFTER, self._read_ahead_page)

    def _read_ahead_page(self) -> None:
        if not self._ahead or self.document is None or self._drawn_under is None:
            self._ahead = []
            return
        top = self._ahead.pop(0)
        height = max(1, self.scrollable_content_region.height)
        width, total = self._drawn_under[0], self.virtual_size.height
        for line in range(top, min(top + height, total)):
            row, part = self._row_at(line)
            key = (row, part, False)
            if row < len(self.document) and row != self.cursor and key not in self._strips:
                self._strips[key] = self._strip(row, part, width, False)
        if self._ahead:
            self.set_timer(READ_AHEAD_AFTER, self._read_ahead_page)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        document, painter = self.document, self.painter
        if document is None or painter is None or self.blank:
            return Strip.blank(width, self.rich_style)
        base = self._base_style or self.rich_style
        under = (width, int(self.scroll_offset.x), self.wrap, self.search, base)
        if under != self._drawn_under:
            self._strips.clear()
            self._planned = []  # what was drawn ahead is gone
            self._drawn_under = under
        row, part = self._row_at(int(self.scroll_offset.y) + y)
        if row >= len(document):
            return Strip.blank(width, base)
        key = (row, part, row == self.cursor)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strip(row, part, width, row == self.cursor)
            self._strips[key] = strip
        return strip

    def _strip(self, row: int, part: int, width: int, cursor: bool) -> Strip:
        painter = self.painter
        assert painter is not None and self.document is not None
        assert self._drawn_under is not None  # set by render_line before any strip
        kind = self.document.rows[row][0]
        background = self._drawn_under[-1] + painter.background(kind, cursor)
        body = painter.body(row)
        if self.search:
            body = body.copy()
            body.highlight_words([self.search], MATCH, case_sensitive=False)
        segments = list(body.render(self.app.console, end="")) if body else []
        if kind in HEADINGS:  # the whole width, never scrolled sideways
            gutter, room, scroll_x = [], width, 0
        else:
            gutter = painter.gutter(row, continued=part > 0)
            room, scroll_x = max(1, width - painter.gutter_width), int(self.scroll_offset.x)
        start = part * room if self.wrap else scroll_x
        length = Segment.get_line_length(segments)
        if start or length > room:  # one Strip for the line, not one per step of it
            content = Strip(segments, length).crop(start, start + room)
            segments, length = list(content), content.cell_length
        line = Strip([*gutter, *segments], Segment.get_line_length(gutter) + length)
        return line.adjust_cell_length(width).apply_style(background)

    # -- the cursor ---------------------------------------------------------------------

    def move_to(self, row: int, *, center: bool = False) -> None:
        document = self.document
        if document is None or not len(document):
            return
        row = max(0, min(row, len(document) - 1))
        old, self.cursor = self.cursor, row
        self.refresh_lines(self._top_of(old), self._height_of(old))
        self.refresh_lines(self._top_of(row), self._height_of(row))
        self._reveal(row, center=center)
        self.post_message(self.CursorMoved(self, row))

    def _reveal(self, row: int, *, center: bool = False) -> None:
        """Scroll so the cursor's row is on screen (``center``: in the middle)."""
        if self.document is None:
            return
        height = max(1, self.scrollable_content_region.height)
        top, lines = self._top_of(row), self._height_of(row)
        first = int(self.scroll_offset.y)
        if center:
            target = max(0, top - height // 3)
        elif top < first:
            target = top
        elif top + lines > first + height:
            target = top + lines - height
        else:
            return
        self.scroll_to(y=target, animate=False, immediate=True)

    def action_move(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        if self.wrap:
            line = self._top_of(self.cursor) + direction * height
            target = self._row_at(max(0, min(line, self.virtual_size.height - 1)))[0]
        else:
            target = self.cursor + direction * height
        self.scroll_to(
            y=max(0, self.scroll_offset.y + direction * height), animate=False, immediate=True
        )
        self.move_to(target)

    def action_edge(self, end: int) -> None:
        if self.document is not None:
            self.move_to(len(self.document) - 1 if end else 0)

    def action_file(self, step: int) -> None:
        self._jump(self.document.files if self.document else [], step)

    def action_hunk(self, step: int) -> None:
        self._jump(self.document.hunks if self.document else [], step)

    def _jump(self, starts: list[int], step: int) -> None:
        document = self.document
        if document is None:
            return
        if step > 0:
            found = document.next_start(starts, self.cursor)
        else:
            found = document.previous_start(starts, self.cursor)
        if found is not None:
            self.move_to(found, center=True)
            if step > 0 or found != self.cursor:
                self._pin(found)

    def _pin(self, row: int) -> None:
        """A file or hunk jumped to goes to the top of the screen, like a pager's."""
        self.scroll_to(y=self._top_of(row), animate=False, immediate=True)

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap

    def action_match(self, step: int) -> None:
        if self.document is None or not self.search:
            self.notify("/ to search", timeout=2)
            return
        found = self.document.search(self.search, self.cursor, forward=step > 0)
        if found is None:
            self.notify(f"{self.search!r} is nowhere in this diff", severity="warning", timeout=3)
        else:
            self.move_to(found, center=True)

    def action_sideways(self, step: int) -> None:
        if not self.wrap:
            self.scroll_to(x=max(0, self.scroll_offset.x + step), animate=False, immediate=True)

    def find(self, text: str) -> bool:
        """Search for ``text`` from the cursor; True when found (the cursor moves there)."""
        self.search = text
        if not text or self.document is None:
            return False
        found = self.document.search(text, self.cursor - 1 if self.cursor else -1)
        if found is None:
            return False
        self.move_to(found, center=True)
        return True

    def cursor_text(self) -> Text:
        """Where the cursor is, for the status line."""
        document = self.document
        if document is None:
            return Text("")
        index = document.file_at(self.cursor)
        files = len(document.files)
        _, _, old, new, _ = document.rows[self.cursor]
        where = f"file {index + 1}/{files}" if index >= 0 else f"{files} files"
        line = f" · line {new or old}" if (new or old) else ""
        return Text(f"{where}{line} · row {self.cursor + 1}/{len(document)}", Style(dim=True))
