"""How the console's table draws a line: its columns, each cell's value as text, the line.

A cell is drawn as Textual's DataTable draws one (a space either side, the row's style
under the value's own, the cursor's colour over it): a cell of text straight from its
segments, any other renderable through Rich's layout. Each distinct cell (value, width,
styles) is drawn once and kept: most cells of a fleet show the same few words, and a
line is its cells' segments joined. A ``str`` cell is shown as it is written, never
parsed as markup: names and notes come from other processes' files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rich.console import Console, ConsoleOptions, RenderableType
from rich.padding import Padding
from rich.protocol import is_renderable
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.render import measure
from textual.renderables.styled import Styled
from textual.strip import Strip

PAD = 1  # spaces either side of a cell's value
CELLS_KEPT = 4096  # distinct cells drawn and kept (a few screens' worth)
LOOKS_KEPT = 64  # sets of styles whose cell styles are kept (a table's: a few)
EMPTY = Text("", end="")


def fingerprint(value: Any) -> Any:
    """Rich ``Text`` compares equal across styles; compare what is drawn instead."""
    if isinstance(value, Text):
        return (value.plain, str(value.style), tuple(value.spans))
    return value


def as_renderable(value: Any) -> RenderableType:
    """What a cell value draws: ``Text`` and other renderables as they are, anything else
    as plain text (a float with two decimals, as DataTable shows one)."""
    if value is None:
        return EMPTY
    if isinstance(value, str):
        return Text(value, end="", no_wrap=True) if value else EMPTY
    if isinstance(value, float):
        return Text(f"{value:.2f}", end="", no_wrap=True)
    if not is_renderable(value):
        return Text(str(value), end="", no_wrap=True)
    shown: RenderableType = value
    return shown


def value_width(console: Console, value: Any) -> int:
    """Cells the value takes on one line (what an auto-width column fits)."""
    shown = as_renderable(value)
    if isinstance(shown, Text) and "\n" not in shown.plain:
        return shown.cell_len
    return measure(console, shown, 1)


@dataclass
class Column:
    key: str
    label: Text
    width: int | None  # None: as wide as its widest value (or label)
    widths: dict[int, int] = field(default_factory=dict)  # auto: value width -> rows

    @property
    def content_width(self) -> int:
        label = self.label.cell_len
        if self.width is not None:
            return self.width
        return max(label, max(self.widths, default=0))

    @property
    def render_width(self) -> int:
        return self.content_width + 2 * PAD

    def count(self, width: int, rows: int) -> bool:
        """An auto column gains (``rows`` 1) or loses (-1) a value ``width`` wide; True
        when that changes the column's width."""
        before = self.content_width
        left = self.widths.get(width, 0) + rows
        if left > 0:
            self.widths[width] = left
        else:
            self.widths.pop(width, None)
        return self.content_width != before


def join_runs(cells: Iterable[Sequence[Segment]]) -> list[Segment]:
    """The cells' segments, each run of one style joined into one segment across the
    cells' edges: what ``Segment.simplify`` makes of them all (empty ones left out), with
    styles compared at the edges only (and past an empty segment). Each cell's own runs
    are joined already (``draw_cell``, or a cut of such a cell), so a line of 12 cells
    compares 12 pairs, not 20. A control segment aside (Rich joins runs past one only on a
    second pass; a cell of text has none), which changes how a line is cut, not what it
    shows."""
    joined: list[Segment] = []
    for cell in cells:
        edge = True
        for segment in cell:
            if not segment.text:
                edge = True
                continue
            if edge and joined and not segment.control:
                last = joined[-1]
                if last.style == segment.style:
                    joined[-1] = Segment(last.text + segment.text, last.style)
                    edge = False
                    continue
            edge = False
            joined.append(segment)
    return joined


def draw_cell(
    console: Console, options: ConsoleOptions, value: Any, width: int, pre: Style, post: Style
) -> list[Segment]:
    """One line of ``width`` cells: ``value`` padded, ``pre`` under its own styles and
    ``post`` over them; runs of one style joined."""
    shown = as_renderable(value)
    if (
        not isinstance(shown, Text)
        or "\n" in (plain := shown.plain)
        or "\t" in plain
        or shown.justify not in (None, "default")
        or shown.overflow not in (None, "fold", "crop")
    ):
        return draw_cell_through_rich(console, options, value, width, pre, post)
    # What Rich does for one line of text: its segments cut or padded to the width, a
    # space either side, ``pre`` under and ``post`` over each style.
    if shown.spans:
        rendered = list(shown.render(console, end=""))
    else:  # Text.render applies the text's own style only beside spans
        rendered = [Segment(plain, console.get_style(shown.style))]
    line = Segment.adjust_line_length(rendered, width - 2 * PAD)
    pad = Segment(" " * PAD, pre + post)
    segments = [pad, *(Segment(text, pre + style + post) for text, style, _ in line), pad]
    return list(Strip(segments, width).simplify())


def draw_cell_through_rich(
    console: Console, options: ConsoleOptions, value: Any, width: int, pre: Style, post: Style
) -> list[Segment]:
    """``draw_cell`` for any renderable, through Rich's own layout (as DataTable does)."""
    lines = console.render_lines(
        Styled(Padding(as_renderable(value), (0, PAD)), pre_style=pre, post_style=post),
        options.update_dimensions(width, 1).update(no_wrap=True),
    )
    if not lines:
        return [Segment(" " * width, pre)]
    return list(Strip(lines[0], width).simplify())


@dataclass(frozen=True)
class Look:
    """What every line of a frame is drawn with: the table's styles and geometry."""

    base: Style
    header: Style
    cursor: Style
    hover: Style
    header_hover: Style
    widths: tuple[int, ...]  # each column's, padding included
    width: int  # the table's on screen
    scroll_x: int

    def cell_styles(self, header: bool, cursor: bool, hover: bool) -> tuple[Style, Style]:
        """(under the value, over it) for a cell, as DataTable layers them: the row's
        style, the hover's and the cursor's; the cursor's colour wins over the value's."""
        component = Style()
        if hover:
            component += self.hover
            if header:
                component += self.header_hover
        if cursor:
            component += self.cursor
        row = self.header if header else self.base
        return row + component, Style.from_color(color=component.color)


class Painted(NamedTuple):
    """A drawn line, and the values and cells (in sight; None out of it) it was drawn of."""

    strip: Strip
    values: Sequence[Any]
    cells: Sequence[list[Segment] | None]


class LinePainter:
    """Lines of cells drawn once per (value, width, styles) and kept; a line's runs of
    one style are joined, across cells too (a cell carries no place of its own: clicks
    are placed by the table's geometry)."""

    def __init__(self) -> None:
        self._drawn: LRUCache[tuple[Any, ...], list[Segment]] = LRUCache(CELLS_KEPT)
        self._layers: dict[tuple[Style | bool, ...], tuple[Style, Style]] = {}

    def line(
        self,
        console: Console,
        options: ConsoleOptions,
        look: Look,
        values: Sequence[Any],
        *,
        header: bool = False,
        cursor: bool = False,
        hover: bool = False,
        before: Painted | None = None,
    ) -> Painted:
        """A line of ``values`` across the table, scrolled and cut to its width: only the
        cells in sight are looked up, and only a cell cut by an edge is cropped (a line
        160 wide of a table 200 wide is not joined whole and cut again). ``before``: the
        same row's line drawn with the same look, cursor and hover; its cells whose value
        is the very object in ``values`` are taken as they are (a second's tick moves one
        cell of a row, the age, and leaves the others' objects in place). So a table's
        value is never changed in place: a cell that changes is a new object."""
        pre, post = self._styles(look, header, cursor, hover)
        left, right = look.scroll_x, look.scroll_x + look.width
        was, kept = (before.values, before.cells) if before is not None else ((), ())
        cells: list[list[Segment] | None] = [None] * len(values)
        runs: list[list[Segment]] = []
        x = 0
        for index, (value, width) in enumerate(zip(values, look.widths, strict=True)):
            start, x = x, x + width
            if x <= left:
                continue
            if start >= right:
                break
            cell = kept[index] if index < len(was) and was[index] is value else None
            if cell is None:
                cell = self.cell(console, options, value, width, pre, post)
                if start < left or x > right:
                    cell = list(
                        Strip(cell, width).crop(max(left, start) - start, min(right, x) - start)
                    )
            cells[index] = cell
            runs.append(cell)
        else:  # past the table: the row's style to the view's width, the base beyond
            end = max(look.width, x)
            if max(x, left) < min(end, right):
                runs.append([Segment(" " * (min(end, right) - max(x, left)), pre)])
            if end < right:
                runs.append([Segment(" " * (right - max(end, left)), look.base)])
        # One segment a run of one style across cells: what every frame's line filters,
        # the compositor's cuts, a window's dimmed copy of the console and the terminal's
        # bytes go over (20 segments a line of the Agents pane -> 7).
        return Painted(Strip(join_runs(runs), look.width), values, cells)

    def _styles(self, look: Look, header: bool, cursor: bool, hover: bool) -> tuple[Style, Style]:
        """``look.cell_styles``, worked out once per set of styles (every line of a frame
        asks; a scroll or a new width keeps them)."""
        key: tuple[Style | bool, ...] = (look.base, look.header, look.cursor, look.hover)
        key += (look.header_hover, header, cursor, hover)
        styles = self._layers.get(key)
        if styles is None:
            if len(self._layers) >= LOOKS_KEPT:
                self._layers.clear()
            styles = self._layers[key] = look.cell_styles(header, cursor, hover)
        return styles

    def cell(
        self,
        console: Console,
        options: ConsoleOptions,
        value: Any,
        width: int,
        pre: Style,
        post: Style,
    ) -> list[Segment]:
        try:
            key = (fingerprint(value), width, pre, post)
            drawn = self._drawn.get(key)
        except TypeError:  # a value that cannot be a key: drawn each time
            return draw_cell(console, options, value, width, pre, post)
        if drawn is None:
            drawn = self._drawn[key] = draw_cell(console, options, value, width, pre, post)
        return drawn
