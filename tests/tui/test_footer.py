"""The console's footer: one widget drawing the keys of the focused widget and its screen
as Textual's footer does, drawn again only when they change, and acting as its keys do
under the pointer (a click presses one, hovering lights it and shows its tooltip)."""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button

from runeconsole.tui.widgets.footer import ConsoleFooter


class Keys(App[None]):
    BINDINGS = [
        Binding("x", "press('x')", "Ex", tooltip="does x"),
        Binding("y", "press('y')", "Why"),
        Binding("z", "press('z')", "Zed"),
        Binding("w", "press('w')", "Hidden", show=False),
        Binding("v", "press('x')", "Also x"),  # another key for x's action: not shown
    ]

    def __init__(self) -> None:
        super().__init__()
        self.pressed: list[str] = []
        self.z_enabled = True

    def compose(self) -> ComposeResult:
        yield Button("one")
        yield Button("two")
        yield ConsoleFooter()

    def action_press(self, key: str) -> None:
        self.pressed.append(key)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "press" and parameters == ("z",):
            return True if self.z_enabled else None  # None: shown, disabled
        return True


def line(app: App[object]) -> str:
    footer = app.screen.query_one(ConsoleFooter)
    return "".join(segment.text for segment in footer.render_line(0))


async def test_the_footer_shows_each_actions_first_key_and_the_palettes_key_on_the_right() -> None:
    app = Keys()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        drawn = line(app)
        assert drawn.startswith(" x Ex  y Why  z Zed ")
        assert drawn.rstrip().endswith("▏^p palette") and len(drawn) == 60
        assert "Hidden" not in drawn and "Also" not in drawn
        footer = app.query_one(ConsoleFooter)
        assert [key.key for key in footer.placed] == ["x", "y", "z", "ctrl+p"]
        assert [(key.start, key.end) for key in footer.placed[:2]] == [
            (0, 6),
            (6, 13),
        ]  # " x Ex ", " y Why "


async def test_a_click_on_a_key_presses_it_and_a_disabled_one_only_rings() -> None:
    app = Keys()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        footer = app.query_one(ConsoleFooter)
        await pilot.click(ConsoleFooter, offset=(7, 0))  # on "y Why"
        await pilot.pause()
        assert app.pressed == ["y"]
        app.z_enabled = False
        app.refresh_bindings()
        await pilot.pause()
        z = next(key for key in footer.placed if key.key == "z")
        assert not z.enabled
        await pilot.click(ConsoleFooter, offset=(z.start + 1, 0))
        await pilot.pause()
        assert app.pressed == ["y"]  # a disabled key is not pressed


async def test_the_key_under_the_pointer_is_lit_and_shows_its_tooltip() -> None:
    app = Keys()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        footer = app.query_one(ConsoleFooter)
        plain = list(footer.render_line(0))
        await pilot.hover(ConsoleFooter, offset=(1, 0))
        await pilot.pause()
        assert footer.hovered == "press('x')" and footer.tooltip == "does x"
        lit = list(footer.render_line(0))
        assert lit[0].style != plain[0].style  # x's key drawn lit
        await pilot.hover(ConsoleFooter, offset=(7, 0))
        await pilot.pause()
        assert footer.hovered == "press('y')" and footer.tooltip is None  # y has none


async def test_the_keys_are_drawn_again_only_when_they_change() -> None:
    app = Keys()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        footer = app.query_one(ConsoleFooter)
        builds = footer.builds
        app.refresh_bindings()  # the same keys
        await pilot.pause()
        assert footer.builds == builds
        app.z_enabled = False  # one key's state changes
        app.refresh_bindings()
        await pilot.pause()
        assert footer.builds == builds + 1
        assert "z Zed" in line(app)  # still shown, dim


async def test_the_footer_is_one_widget_whatever_the_keys() -> None:
    app = Keys()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        widgets = len(list(app.screen.walk_children()))
        app.z_enabled = False
        app.refresh_bindings()
        await pilot.press("tab")
        await pilot.pause()
        assert len(list(app.screen.walk_children())) == widgets
        assert not app.query_one(ConsoleFooter).children


async def test_the_keys_stay_while_the_terminal_has_lost_the_focus() -> None:
    app = Keys()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        footer = app.query_one(ConsoleFooter)
        builds = footer.builds
        app.post_message(events.AppBlur())  # Textual takes the focus from the button
        await pilot.pause()
        app.z_enabled = False
        app.refresh_bindings()
        await pilot.pause()
        assert footer.builds == builds  # nothing moves under the tap that brings it back
        app.post_message(events.AppFocus())
        await pilot.pause()
        assert footer.builds == builds + 1  # now drawn as they are
        assert not next(key for key in footer.keys if key.key == "z").enabled
