"""The console's tab strip: the panes' titles and the bar under the active one, one
widget drawing two lines, as Textual's ``TabbedContent`` tabs look.

Textual's tabs are a widget per tab, an underline widget and the containers around them
(20 of the console's 69 widgets; without them and the footer's 12, 37 are left): a pane
switch restyled two tabs, moved the underline and drew them all again with the whole
screen, and the first frame styled every one of them. This strip draws one line of
titles (`` 1 Agents ``, the active one brighter, the one under the pointer lit) and one
of Textual's ``Bar`` under them (lit under the active title), kept as ``Strip``s until a
title, the active tab, the pointer or the width changes. A click on a title or under it
says which pane was chosen (``Chosen``); the app shows it (``PanesApp.goto_pane``): the
strip itself never takes the focus.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.renderables.bar import Bar
from textual.strip import Strip
from textual.widget import Widget


class PaneTabs(Widget, can_focus=False):
    ALLOW_SELECT = False
    DEFAULT_CSS = """
    PaneTabs {
        height: 2;
        width: 1fr;
        .pane-tabs--tab {
            color: $foreground 50%;
            padding: 0 1;
        }
        .pane-tabs--active, .pane-tabs--hover {
            color: $foreground;
        }
        .pane-tabs--bar {
            color: $block-cursor-background;
            background: $foreground 10%;
        }
        &:ansi {
            .pane-tabs--tab {
                text-style: dim;
            }
            .pane-tabs--active {
                text-style: not dim bold;
            }
            .pane-tabs--bar {
                color: $block-cursor-background;
                background: $border-blurred;
            }
        }
    }
    """
    COMPONENT_CLASSES = {
        "pane-tabs--tab",
        "pane-tabs--active",
        "pane-tabs--hover",
        "pane-tabs--bar",
    }

    active: reactive[str] = reactive("")
    hovered: reactive[str | None] = reactive(None)

    class Chosen(Message):
        """A tab was clicked: show its pane."""

        def __init__(self, tab: str) -> None:
            super().__init__()
            self.tab = tab

    def __init__(
        self, tabs: Sequence[tuple[str, str]], *, id: str | None = None, classes: str | None = None
    ) -> None:
        """``tabs``: each tab's id and title, in order; the first is active."""
        super().__init__(id=id, classes=classes)
        self.titles: dict[str, str] = dict(tabs)
        self.set_reactive(PaneTabs.active, next(iter(self.titles), ""))
        self.drawn: tuple[object, ...] | None = None  # what ``lines`` were drawn for
        self.lines: tuple[Strip, Strip] = (Strip.blank(0), Strip.blank(0))

    @property
    def tab_ids(self) -> list[str]:
        return list(self.titles)

    def set_title(self, tab: str, title: str) -> None:
        if self.titles.get(tab) != title:
            self.titles[tab] = title
            self.refresh()

    def padding(self) -> tuple[int, int]:
        """Blank columns left and right of each title (CSS: ``.pane-tabs--tab``'s padding;
        the consoles give an 80-column screen one space before each title only)."""
        padding = self.get_component_styles("pane-tabs--tab").padding
        return padding.left, padding.right

    def spans(self) -> list[tuple[str, int, int]]:
        """Each tab's id and the columns it takes, its padding included (start, end)."""
        left, right = self.padding()
        spans, at = [], 0
        for tab, title in self.titles.items():
            width = left + cell_len(title) + right
            spans.append((tab, at, at + width))
            at += width
        return spans

    def tab_at(self, x: int) -> str | None:
        return next((tab for tab, start, end in self.spans() if start <= x < end), None)

    # -- drawing ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        key = (
            width, self.active, self.hovered, tuple(self.titles.items()), self.app.theme,
            self.padding(),
        )  # fmt: skip
        if key != self.drawn:
            self.lines = (self.titles_line(width), self.bar_line(width))
            self.drawn = key
        return self.lines[y] if y < 2 else Strip.blank(width)

    def titles_line(self, width: int) -> Strip:
        """`` 1 Agents `` and the rest, in the colours of Textual's tabs (worked out as a
        widget's are: a colour with alpha over the background)."""
        look = {
            state: self.get_component_rich_style(f"pane-tabs--{state}")
            for state in ("tab", "active", "hover")
        }
        left, right = self.padding()
        segments = []
        for tab, title in self.titles.items():
            state = "active" if tab == self.active else "hover" if tab == self.hovered else "tab"
            segments.append(Segment(" " * left + title + " " * right, look[state]))
        line = Segment.adjust_line_length(segments, width, self.rich_style)
        return Strip(line, width)

    def bar_line(self, width: int) -> Strip:
        """Textual's ``Bar``, lit under the active title (its padding left out), as the
        underline of Textual's tabs draws it."""
        bar = self.get_component_rich_style("pane-tabs--bar")
        span = next(((start, end) for tab, start, end in self.spans() if tab == self.active), None)
        left, right = self.padding()
        lit = (span[0] + left, span[1] - right) if span is not None else (0, 0)
        renderable = Bar(
            highlight_range=lit,
            highlight_style=RichStyle.from_color(bar.color),
            background_style=RichStyle.from_color(bar.bgcolor),
            width=width,
        )
        console = self.app.console
        options = console.options.update_width(width)
        segments = list(console.render(renderable, options))
        line = Segment.adjust_line_length(
            [s for s in segments if s.text != "\n"], width, self.rich_style
        )
        return Strip(line, width).apply_style(self.rich_style)

    # -- the pointer -------------------------------------------------------------------------

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hovered = self.tab_at(event.x) if event.y == 0 else None

    def on_leave(self, event: events.Leave) -> None:
        self.hovered = None

    def on_click(self, event: events.Click) -> None:
        tab = self.tab_at(event.x)
        if tab is not None:
            event.stop()
            self.post_message(self.Chosen(tab))
