"""The console's footer: the keys of the focused widget and its screen, one widget drawing
one line, as Textual's ``Footer`` looks.

Textual's ``Footer`` makes a widget of every key it shows and makes them all again
whenever its screen's bindings are refreshed: on every focus change, so on ``/`` and
``escape`` of the filter, a pane switch, a window opened and closed. Mounting, styling
and laying out a dozen widgets was half the work of such a key (a pane switch at 50,000
agents: 90 ms of CPU with it, 50 without). This footer works out the keys it would show
(``shown_keys``: key, label, action, whether enabled, tooltip) and, when they differ from
those it shows, draws them again as one line of text: no widget is made or styled.

It looks and acts as Textual's does: each key as `` key `` then its label in the theme's
footer colours (a disabled one dim), one key per action, the command palette's key on the
right behind a bar, the key under the pointer lit, a click on a key pressed, its tooltip
shown on hover. It keeps the pane's keys while the filter line has the focus (its own
are not shown, and the pane's come back on escape). The footer of a screen hidden under
an opaque one waits: the screen refreshes its bindings when it is shown again. Under a
window (a modal, see-through) it is drawn as before: it shows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget

from runeconsole.tui.widgets.filter_box import FilterBox

ShownKeys = tuple[tuple[str, str, str, bool, str], ...]
BAR = "▏"  # between the keys and the palette's key, as Textual's footer draws its border


def shown_keys(screen: Screen[object]) -> ShownKeys:
    """What a footer on ``screen`` would show: each shown binding's key, label, action,
    whether it is enabled and its tooltip, in order."""
    return tuple(
        (binding.key, binding.description, binding.action, enabled, tooltip)
        for (_, binding, enabled, tooltip) in screen.active_bindings.values()
        if binding.show
    )


@dataclass(frozen=True)
class FooterKey:
    """One key as the footer shows it, and the columns it takes (``start`` to ``end``)."""

    key: str
    display: str
    description: str
    action: str
    enabled: bool
    tooltip: str
    palette: bool = False
    start: int = 0
    end: int = 0

    @property
    def text(self) -> tuple[str, str, str]:
        """The key as drawn, its label, and the item's own padding after them: `` q ``,
        ``Quit ``; the palette's key as Textual's footer draws it, ``^p``, `` palette ``
        and a space."""
        if self.palette:
            return self.display, f" {self.description}" if self.description else "", " "
        return f" {self.display} ", f"{self.description} " if self.description else "", ""


class ConsoleFooter(Widget, can_focus=False):
    ALLOW_SELECT = False
    DEFAULT_CSS = """
    ConsoleFooter {
        dock: bottom;
        height: 1;
        width: 1fr;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        text-overflow: clip;
        .footer-key--item {
            background: $footer-item-background;
        }
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .footer-key--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        .footer-key--disabled {
            text-style: dim;
        }
        .footer-key--bar {
            color: $foreground 20%;
        }
    }
    """
    COMPONENT_CLASSES = {
        "footer-key--item",
        "footer-key--key",
        "footer-key--description",
        "footer-key--hover",
        "footer-key--disabled",
        "footer-key--bar",
    }

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.shown: ShownKeys | None = None  # the bindings drawn, as ``shown_keys`` has them
        self.keys: list[FooterKey] = []  # the keys to draw
        self.placed: list[FooterKey] = []  # those drawn in sight, with their columns
        self.builds = 0  # times the keys were worked out again (each drawn once)
        self.hovered: str | None = None  # the action of the key under the pointer

    def on_mount(self) -> None:
        # Drawn when the screen says its keys are settled (its first idle after the focus
        # moved), not before: keys drawn as it mounts would move under a tap moments later.
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[object]) -> None:
        top = self.app.screen
        if not self.is_attached or screen is not self.screen:
            return
        if not self.app.app_focus and self.shown is not None:
            # The terminal (or browser tab) lost the focus and Textual took it from the
            # focused widget until it is back: the keys stay as they were, or they would
            # move under the tap that brings the focus back (as Textual's footer keeps them).
            return
        if self.screen is not top and top.styles.background.a >= 1:
            return  # hidden: drawn when its screen is shown again (its bindings refresh)
        if isinstance(screen.focused, FilterBox) and self.shown is not None:
            return  # typing a filter: the pane's keys stay in sight
        keys = shown_keys(screen)
        if keys == self.shown:
            return  # the same keys: nothing to draw
        self.shown = keys
        self.keys = self.keys_of(screen)
        self.builds += 1
        self.hover(None)
        self.refresh()

    def keys_of(self, screen: Screen[object]) -> list[FooterKey]:
        """The keys to show, without their columns: the first binding of each action (as
        Textual's footer shows them), then the command palette's key, if it has one."""
        app = self.app
        first: dict[str, tuple[Binding, bool, str]] = {}
        for _, binding, enabled, tooltip in screen.active_bindings.values():
            if binding.show:
                first.setdefault(binding.action, (binding, enabled, tooltip))
        keys = [
            FooterKey(b.key, app.get_key_display(b), b.description, b.action, on, tip)
            for b, on, tip in first.values()
        ]
        palette = screen.active_bindings.get(app.COMMAND_PALETTE_BINDING)
        if app.ENABLE_COMMAND_PALETTE and palette is not None:
            _, binding, enabled, tooltip = palette
            tip = binding.tooltip or binding.description
            display = app.get_key_display(binding)
            keys.append(
                FooterKey(
                    binding.key, display, binding.description, binding.action, enabled, tip, True
                )
            )
        return keys

    # -- drawing ---------------------------------------------------------------------------

    def render(self) -> Content:
        width = self.size.width
        keys = [key for key in self.keys if not key.palette]
        palette = next((key for key in self.keys if key.palette), None)
        placed: list[FooterKey] = []
        parts: list[Content] = []
        at = 0
        for key in keys:
            drawn = self.drawn(key)
            end = at + drawn.cell_length
            placed.append(replace(key, start=at, end=end))
            parts.append(drawn)
            at = end
        line = Content.assemble(*parts)
        if palette is not None:
            drawn = self.drawn(palette)
            bar = Content.styled(BAR, self.get_visual_style("footer-key--bar", partial=True))
            right = width - drawn.cell_length - 1
            if right > 0:
                line = line.truncate(right, pad=True) + bar + drawn
                placed = [key for key in placed if key.end <= right]
                start = right + 1
                placed.append(replace(palette, start=start, end=start + drawn.cell_length))
        self.placed = placed
        return line

    def drawn(self, key: FooterKey) -> Content:
        shown, label, padding = key.text
        style = self.get_visual_style
        item = style("footer-key--item", partial=True)
        if key.action == self.hovered:
            item = item + style("footer-key--hover", partial=True)
        if not key.enabled:
            item = item + style("footer-key--disabled", partial=True)
        parts = Content.assemble(
            (shown, style("footer-key--key", partial=True)),
            (label, style("footer-key--description", partial=True)),
            padding,
        )
        return parts.stylize_before(item)

    # -- the pointer -------------------------------------------------------------------------

    def key_at(self, x: int) -> FooterKey | None:
        """The key drawn at column ``x``, if any."""
        return next((key for key in self.placed if key.start <= x < key.end), None)

    def hover(self, key: FooterKey | None) -> None:
        action = None if key is None else key.action
        if action == self.hovered:
            return
        self.hovered = action
        self.tooltip = (key.tooltip or None) if key is not None else None
        self.refresh()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hover(self.key_at(event.x))

    def on_leave(self, event: events.Leave) -> None:
        self.hover(None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        key = self.key_at(event.x)
        if key is None:
            return
        if key.enabled:
            self.app.simulate_key(key.key)
        else:
            self.app.bell()
