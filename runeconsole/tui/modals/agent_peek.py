"""An agent's screen and its last assistant message, kept current while shown.

``peek`` returns what ``runeconsole peek --json`` prints (``PeekResult.to_json()``): read
in-process for an agent of this project, or from the agent's source over SSH in the fleet
console, so both draw it the same way. It is read off the UI thread every ``every``
seconds (one read at a time: a slow source is not asked again meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.selection import Selection
from textual.widget import Widget

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age, parse_iso
from runeconsole.tui.support.workers import background

Peek = Callable[[], Any]


class Parts(NamedTuple):
    screen_title: Text
    screen: Text | None
    message_title: Text
    message: Text


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    return value if isinstance(value, str) else ""


def screen_title(data: dict[str, Any], every: float) -> Text:
    title = Text("Screen", "bold")
    where = _text(data, "screen_from")
    title.append(f"  {where or 'none'}", "dim" if where else "yellow")
    if where.startswith(("pane", "tmux")):  # live: read again and again
        title.append(f" · every {every:g}s", "dim")
    note = _text(data, "screen_note")
    if note:
        title.append(f"\n{note}", "yellow")
    return title


def message_title(data: dict[str, Any], now: Any) -> Text:
    title = Text("Last message", "bold")
    source, at = _text(data, "last_message_from"), parse_iso(data.get("last_message_at"))
    if source:
        title.append(f"  {source}", "dim")
    if at is not None:
        title.append(f" · {format_age((now - at).total_seconds())} ago", "dim")
    return title


class AgentPeek(Widget):
    """The screen (cropped to the window, as a screen is) and the last message: one
    widget drawing four parts (each a widget of its own, they were styled, mounted and
    laid out as the window opened: a tenth of an agent's window's first frame)."""

    COMPONENT_CLASSES = {"agent-peek--screen"}
    DEFAULT_CSS = """
    AgentPeek { height: auto; margin-bottom: 1; }
    AgentPeek > .agent-peek--screen { background: $boost; }
    """

    def __init__(self, peek: Peek, now: Callable[[], Any], *, every: float = 1.0) -> None:
        super().__init__()
        self.peek = peek
        self.now = now
        self.every = every
        self.reading = False
        self.last: dict[str, Any] | None = None  # the last read; None: none yet

    def on_mount(self) -> None:
        self.call_after_refresh(self.read)  # once the window is drawn, not beside its frame
        if self.every:
            self.set_interval(self.every, self.read)

    def read(self) -> None:
        if not self.reading:
            self.reading = True
            self.read_now()

    @background("agent-peek")
    def read_now(self) -> None:
        try:
            data = self.peek()
        except Exception as exc:  # the agent is gone, the source is down: said, not fatal
            said = exc.message if isinstance(exc, RuneError) else f"{type(exc).__name__}: {exc}"
            data = {"screen": "", "screen_from": None, "screen_note": said}
        self.app.call_from_thread(self.show, data if isinstance(data, dict) else {})

    def show(self, data: dict[str, Any]) -> None:
        self.reading = False
        if not self.is_mounted or data == self.last:
            return
        self.last = data
        self.refresh(layout=True)

    def parts(self) -> Parts:
        """What is shown: the screen's title, the screen (None: no screen, the title
        says why), the last message's title and the message."""
        data = self.last
        if data is None:
            reading = Text("reading…", "dim", no_wrap=True, overflow="crop")
            return Parts(
                Text("Screen", "bold"), reading, Text("Last message", "bold"), Text("…", "dim")
            )
        screen, where = _text(data, "screen"), _text(data, "screen_from")
        shown = Text(screen) if screen else Text("(blank)", "dim")
        shown.no_wrap, shown.overflow = True, "crop"  # cropped to the window, as a screen is
        said = _text(data, "last_message")
        return Parts(
            screen_title(data, self.every),
            shown if where else None,
            message_title(data, self.now()),
            Text(said) if said else Text("(none yet)", "dim"),
        )

    def render(self) -> RenderableType:
        screen_heading, screen, message_heading, message = self.parts()
        shown: list[RenderableType] = [screen_heading]
        if screen is not None:
            style = self.get_component_rich_style("agent-peek--screen")
            shown.append(Padding(screen, (0, 1), style=style, expand=True))
        shown += [Text(""), message_heading, message]
        return Group(*shown)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text under a mouse selection, as drawn: Textual takes text only from a
        widget that draws one ``Text``, and this one draws four parts (the selection is
        copied; it is not highlighted)."""
        console = self.app.console
        options = console.options.update_width(max(1, self.content_region.width))
        lines = console.render_lines(self.render(), options, pad=False)
        drawn = "\n".join("".join(segment.text for segment in line).rstrip() for line in lines)
        return selection.extract(drawn), "\n"
