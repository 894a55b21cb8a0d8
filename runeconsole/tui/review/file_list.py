"""The review's file list: each changed file with its status and lines added and removed;
the file under the diff's cursor is highlighted, ``enter`` (or a click) takes the diff to
a file.

Drawn on Textual's Line API (a ``ScrollView`` whose ``render_line`` draws the lines on
screen), as the diff beside it is: it was an ``OptionList``, whose first paint of a
review made every option a ``Content`` and its strips again (about a fifth of the whole
screen's paint as a review opens, 50 files). It looks and acts as that list did: the
same keys (up, down, home, end, page up and down, enter), the cursor's and the mouse's
styles (the list's own component classes, in the same colours), and a file whose line is
wider than the list wraps onto the lines below it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from runeconsole.services.review.changes import FileChange
from runeconsole.tui.review.painter import STATUS_MARK

CURSOR, HOVER = "file-list--cursor", "file-list--hover"
KEPT_STRIPS = 1000  # drawn lines kept (a line in each of its looks: plain, cursor, hover)


def file_line(change: FileChange) -> Text:
    mark, style = STATUS_MARK.get(change.status, ("M", "bold yellow"))
    numbers = (
        Text("bin", "magenta")
        if change.binary
        else Text.assemble((f"+{change.added}", "green"), (f" −{change.removed}", "red"))
    )
    return Text.assemble((mark, style), " ", numbers, " ", change.shown_path)


class FileMessage(Message):
    """About one file of a ``FileList``: its place in the list."""

    def __init__(self, file_list: FileList, index: int) -> None:
        super().__init__()
        self.file_list, self.index = file_list, index

    @property
    def control(self) -> FileList:
        return self.file_list


class FileList(ScrollView, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("enter", "select", "Select", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {CURSOR, HOVER}
    DEFAULT_CSS = """
    FileList {
        width: 34%;
        max-width: 60;
        min-width: 24;
        height: 1fr;
        color: $foreground;
        background: $surface;
        overflow-x: hidden;
        border: none;
        border-right: vkey $panel;
        padding: 0;
        & > .file-list--cursor {
            color: $foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus {
            border: tall $border;
            background-tint: $foreground 5%;
            & > .file-list--cursor {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
        }
        & > .file-list--hover {
            background: $block-hover-background;
        }
    }
    FileList.-hidden {
        display: none;
    }
    """

    class Highlighted(FileMessage):
        """The cursor was moved to file ``index`` (by a key or the mouse, not ``follow``)."""

    class Selected(FileMessage):
        """``enter`` or a click on file ``index``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.files: list[FileChange] = []  # what the lines show
        self.highlighted: int | None = None  # the cursor's file
        self.hover: int | None = None  # the file under the mouse
        self._texts: list[Text] = []
        self._lines: list[tuple[int, Text]] = []  # (file, its text on this line)
        self._starts: list[int] = []  # each file's first line
        self._laid_for = -1  # the width the lines were laid out for
        self._strips: LRUCache[tuple[int, Style], Strip] = LRUCache(KEPT_STRIPS)
        self._styles: dict[str, Style] = {}

    def show_files(self, files: list[FileChange]) -> None:
        """Show ``files``: the same list again draws nothing anew; another list of as many
        files keeps the cursor (an agent's numbers moved), else it starts with none."""
        if files == self.files:
            return
        same_count = len(files) == len(self.files)
        self.files = list(files)
        self._texts = [file_line(f) for f in files]
        self._laid_for = -1
        self._strips.clear()
        if not same_count:
            self.highlighted = self.hover = None
            self.scroll_to(y=0, animate=False, immediate=True)
        self._lay_out()
        self.refresh()

    @property
    def count(self) -> int:
        return len(self.files)

    def follow(self, index: int) -> None:
        """Highlight the file the diff's cursor is in (without moving the diff)."""
        if 0 <= index < len(self.files) and self.highlighted != index:
            self._move(index)

    # -- lines ------------------------------------------------------------------------

    def _lay_out(self) -> None:
        """Each file's lines at the list's width (one, unless its text is wider)."""
        width = self.scrollable_content_region.width
        if width == self._laid_for:
            return
        self._laid_for = width
        lines: list[tuple[int, Text]] = []
        starts: list[int] = []
        console = self.app.console if width > 0 else None
        for index, text in enumerate(self._texts):
            starts.append(len(lines))
            if console is None or cell_len(text.plain) <= width:
                lines.append((index, text))
            else:
                lines.extend((index, part) for part in text.wrap(console, width))
        self._lines, self._starts = lines, starts
        self._strips.clear()
        self.virtual_size = Size(width, len(lines))

    def on_resize(self) -> None:
        self._lay_out()
        self._reveal()

    def notify_style_update(self) -> None:
        self._styles.clear()
        self._strips.clear()
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        """The styles of one update worked out once for all of its lines."""
        self._lay_out()
        self._styles = {
            name: self.get_visual_style(*names).rich_style
            for name, names in (("", ()), (CURSOR, (CURSOR,)), (HOVER, (HOVER,)))
        }
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = int(self.scroll_offset.y) + y
        styles = self._styles or {"": self.rich_style}
        if line >= len(self._lines):
            return Strip.blank(width, styles[""])
        index, text = self._lines[line]
        kind = CURSOR if index == self.highlighted else HOVER if index == self.hover else ""
        style = styles.get(kind, styles[""])
        strip = self._strips.get((line, style))
        if strip is None:
            strip = Strip(text.render(self.app.console, end="")).apply_style(style)
            pad = width - strip.cell_length  # a segment of its own, as the list drew it
            strip = Strip([*strip, Segment(" " * pad, style)]) if pad > 0 else strip.crop(0, width)
            self._strips[(line, style)] = strip
        return strip

    def _refresh_file(self, index: int | None) -> None:
        if index is not None and 0 <= index < len(self._starts):
            end = self._starts[index + 1] if index + 1 < len(self._starts) else len(self._lines)
            first = self._starts[index] - int(self.scroll_offset.y)
            self.refresh(Region(0, first, self.size.width, end - self._starts[index]))

    # -- the cursor -------------------------------------------------------------------

    def _move(self, index: int) -> None:
        old, self.highlighted = self.highlighted, index
        self._refresh_file(old)
        self._refresh_file(index)
        self._reveal()

    def _reveal(self) -> None:
        index = self.highlighted
        if index is None or not self._lines or index >= len(self._starts):
            return
        first = self._starts[index]
        end = self._starts[index + 1] if index + 1 < len(self._starts) else len(self._lines)
        width = self.scrollable_content_region.width
        self.scroll_to_region(
            Region(0, first, width, end - first), force=True, animate=False, immediate=True
        )

    def _go(self, index: int) -> None:
        """The cursor to file ``index`` by the reviewer's hand: the diff follows."""
        if not self.files:
            return
        index = max(0, min(index, len(self.files) - 1))
        if index != self.highlighted:  # as the list's reactive did: a move, or nothing
            self._move(index)
            self.post_message(self.Highlighted(self, index))

    def action_cursor(self, step: int) -> None:
        if not self.files:
            return
        now = self.highlighted
        if now is None:
            self._go(0 if step > 0 else len(self.files) - 1)
        else:
            self._go((now + step) % len(self.files))  # round, as the list did

    def action_edge(self, end: int) -> None:
        self._go(len(self.files) - 1 if end else 0)

    def action_page(self, direction: int) -> None:
        now = self.highlighted
        if now is None:
            self.action_edge(1 if direction > 0 else 0)
            return
        height = max(1, self.scrollable_content_region.height)
        line = max(0, min(self._starts[now] + direction * height, len(self._lines) - 1))
        self._go(self._lines[line][0])

    def action_select(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Selected(self, self.highlighted))

    # -- the mouse --------------------------------------------------------------------

    def _file_under(self, event: events.MouseEvent) -> int | None:
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        line = int(self.scroll_offset.y) + offset.y
        return self._lines[line][0] if 0 <= line < len(self._lines) else None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        found = self._file_under(event)
        if found != self.hover:
            old, self.hover = self.hover, found
            self._refresh_file(old)
            self._refresh_file(found)

    def on_leave(self) -> None:
        old, self.hover = self.hover, None
        self._refresh_file(old)

    def on_click(self, event: events.Click) -> None:
        found = self._file_under(event)
        if found is not None:
            self._go(found)
            self.post_message(self.Selected(self, found))
