"""Textual keeps the lines of widgets taken down in a shared memo (its issue #6665); the
console's heap upkeep lets go of them (``tui/support/textual_workarounds.py``). With a real
app, real widgets and the real memo. And a region repainted is sent to the terminal alone,
not its line from the widget's edge (Textual's issue #5625)."""

from __future__ import annotations

import gc

from rich.console import Console
from rich.segment import Segment
from textual._compositor import ChopsUpdate
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.strip import Strip
from textual.widgets import Static

from runeconsole.tui.app_base.console_base import PanesApp
from runeconsole.tui.support import textual_workarounds
from runeconsole.tui.support.heap_upkeep import HeapUpkeep

CARDS = 40


def styles_caches() -> int:
    """Styles caches alive now (one per widget drawn, and any the memo still holds)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == "StylesCache")


class Cards(App[None]):
    def compose(self) -> ComposeResult:
        yield Vertical(id="cards")

    async def deal(self) -> None:
        await self.query_one("#cards").mount_all(
            Static(f"card {n}", classes="card") for n in range(CARDS)
        )

    async def clear(self) -> None:
        await self.query_one("#cards").remove_children()


async def test_cards_taken_down_keep_their_lines_until_the_memo_is_let_go() -> None:
    app = Cards()
    textual_workarounds.release_styles_memo()
    async with app.run_test(size=(40, 60)) as pilot:
        await pilot.pause()
        before = styles_caches()
        for _ in range(3):  # three rounds of cards put up and taken down
            await app.deal()
            await pilot.pause()  # drawn: each card's styles cache is in the memo
            await app.clear()
            await pilot.pause()
        kept = styles_caches() - before
        # When this fails, Textual no longer keeps them: the workaround can go.
        assert kept >= 2 * CARDS, "Textual still keeps the styles caches of cards taken down"
        assert textual_workarounds.kept_styles_entries() >= kept
        assert textual_workarounds.release_styles_memo() >= kept
        # The last cards dealt stay in their container's last arrangement (Textual's
        # layout cache, one per container) until it is arranged again: the others go.
        assert styles_caches() - before <= CARDS, "the cards' styles caches are freed"
        await app.deal()
        await pilot.pause()
        assert len(app.query(".card")) == CARDS, "the cards still draw once the memo is empty"


def test_the_upkeep_lets_go_of_textuals_memo_before_its_collector_pass() -> None:
    calls: list[str] = []

    def collect(*, thaw: bool) -> int:
        calls.append("collect")
        return 0

    def release() -> int:
        calls.append("release")
        return 0

    upkeep = HeapUpkeep(app=None, collect=collect, release=release)  # type: ignore[arg-type]
    upkeep.tick()
    assert calls == ["release", "collect"]


def test_letting_go_where_there_is_nothing_to_let_go_of_does_nothing() -> None:
    textual_workarounds.release_styles_memo()
    assert textual_workarounds.release_styles_memo() == 0
    assert textual_workarounds.kept_styles_entries() == 0


def a_partial_update() -> ChopsUpdate:
    """One line of a widget 10 cells wide from column 0, of which cells 4-6 changed."""
    return ChopsUpdate([{0: Strip([Segment("abcdefghij")])}], [(0, 4, 7)], [[10]])


def test_a_partial_update_sends_the_cells_that_changed_alone() -> None:
    console = Console(width=80, color_system=None)
    sent = textual_workarounds._render_spans(a_partial_update(), console)
    assert sent == "\x1b[1;5Hefg"


def test_textuals_own_partial_update_still_sends_the_line_up_to_them() -> None:
    # Once this fails, Textual cuts at the span's start itself: crop_partial_updates goes.
    console = Console(width=80, color_system=None)
    sent = textual_workarounds.TEXTUALS_RENDER_SEGMENTS(a_partial_update(), console)
    assert sent == "\x1b[1;1Habcdefg"


def test_the_console_sends_partial_updates_cut_at_both_ends() -> None:
    PanesApp()
    assert ChopsUpdate.render_segments is textual_workarounds._render_spans
