"""A cell of text is drawn straight from its segments, as Rich's own layout draws it (the
way DataTable drew every cell), for any text, styles and width."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from runeconsole.tui.widgets.table_cells import (
    LinePainter,
    Look,
    draw_cell,
    draw_cell_through_rich,
    join_runs,
)

LAID_OUT_OTHERWISE = (
    Text("a\tb"),
    Text("right", justify="right"),
    Text("x" * 20, overflow="ellipsis"),
)


def shown(segments: list[Segment]) -> list[tuple[str, Style]]:
    """What the terminal shows: each character and its style (no style: the plain one)."""
    return [(char, segment.style or Style()) for segment in segments for char in segment.text]


CONSOLE = Console(width=200, color_system="truecolor", legacy_windows=False)
STYLES = st.sampled_from(["", "bold", "red", "bold red", "dim", "reverse yellow", "on blue"])
CHARS = st.sampled_from([*"abc xyz-_/[]·●▰▱⟳✓", "界", "😀", "é"])


@st.composite
def texts(draw: st.DrawFn) -> Text | str:
    plain = "".join(draw(st.lists(CHARS, max_size=30)))
    if draw(st.booleans()):
        return plain
    text = Text(plain, style=draw(STYLES), end=draw(st.sampled_from(["", "\n"])))
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, len(plain)))
        text.stylize(draw(STYLES), start, draw(st.integers(start, len(plain))))
    return text


@settings(max_examples=300, deadline=None)
@given(
    texts(),
    st.integers(2, 40),
    st.sampled_from([Style(), Style(color="#e0e0e0", bgcolor="#272727"), Style(bold=True)]),
    st.sampled_from([Style(), Style.from_color(None), Style(color="#ddedf9")]),
)
def test_a_text_cell_is_drawn_as_rich_lays_it_out(
    value: Text | str, width: int, pre: Style, post: Style
) -> None:
    options = CONSOLE.options
    ours = draw_cell(CONSOLE, options, value, width, pre, post)
    assert shown(ours) == shown(draw_cell_through_rich(CONSOLE, options, value, width, pre, post))


def test_text_that_lays_out_otherwise_goes_through_rich() -> None:
    options = CONSOLE.options
    for value in (
        Text("a\tb"),
        Text("right", justify="right"),
        Text("x" * 20, overflow="ellipsis"),
    ):
        assert draw_cell(CONSOLE, options, value, 10, Style(), Style()) == draw_cell_through_rich(
            CONSOLE, options, value, 10, Style(), Style()
        )


WIDTHS = (6, 9, 4, 12, 7)


def look_at(scroll_x: int, width: int) -> Look:
    plain = Style(color="#e0e0e0", bgcolor="#272727")
    return Look(plain, Style(bold=True), Style(reverse=True), plain, plain, WIDTHS, width, scroll_x)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(texts(), min_size=len(WIDTHS), max_size=len(WIDTHS)),
    st.lists(st.booleans(), min_size=len(WIDTHS), max_size=len(WIDTHS)),
    st.lists(texts(), min_size=len(WIDTHS), max_size=len(WIDTHS)),
    st.integers(0, 20),
    st.integers(10, 50),
)
def test_a_line_drawn_again_looks_up_only_the_cells_whose_value_changed_and_joins_runs(
    first: list[Text | str],
    changed: list[bool],
    replacements: list[Text | str],
    scroll_x: int,
    width: int,
) -> None:
    look, options = look_at(scroll_x, width), CONSOLE.options
    old = tuple(first)
    new = tuple(r if c else v for v, c, r in zip(old, changed, replacements, strict=True))
    painter = LinePainter()
    before = painter.line(CONSOLE, options, look, old)
    looked_up: list[object] = []
    cell = painter.cell
    painter.cell = lambda console, options, value, *rest: (  # type: ignore[method-assign]
        looked_up.append(value) or cell(console, options, value, *rest)
    )
    again = painter.line(CONSOLE, options, look, new, before=before)
    fresh = LinePainter().line(CONSOLE, options, look, new)
    assert shown(list(again.strip)) == shown(list(fresh.strip))
    assert again.strip.cell_length == width
    segments = list(again.strip)
    assert all(segment.text for segment in segments)
    assert all(a.style != b.style for a, b in pairwise(segments))  # runs joined
    in_sight = {i for i, c in enumerate(fresh.cells) if c is not None}
    assert looked_up == [new[i] for i in sorted(in_sight) if new[i] is not old[i]]


SEGMENT_STYLES = [None, Style(), Style(bold=True), Style(bold=True), Style(color="red")]


@st.composite
def cells(draw: st.DrawFn) -> list[Segment]:
    """A cell's segments as a painter keeps them: runs of one style joined (empty ones
    kept, as a cut may leave them)."""
    raw = draw(
        st.lists(
            st.tuples(st.sampled_from(["", "a", "bc", " "]), st.sampled_from(SEGMENT_STYLES)),
            max_size=5,
        )
    )
    return list(Segment.simplify(Segment(text, style) for text, style in raw))


@settings(max_examples=300, deadline=None)
@given(st.lists(cells(), max_size=8))
def test_runs_joined_across_cells_are_what_rich_joins_of_the_whole_line(
    line: list[list[Segment]],
) -> None:
    whole = [segment for cell in line for segment in cell if segment.text]
    assert join_runs(line) == list(Segment.simplify(whole))
