"""The pane template is the one table engine: any pane that supplies cells, an order and
what the filter looks in gets the chunked fill, the search that goes only as far as a
screenful needs, rows sorted only when one came or moved, and the cursor kept on its row."""

from __future__ import annotations

from textual.app import App, ComposeResult

from runeconsole.tui.panes.pane import FIRST_ROWS, Pane
from tests.support.polling import until

COUNT = 2_000  # ten screenfuls of the first fill: the rest must come in chunks


class Numbers(Pane[int]):
    """Numbers in order, each with whether it is even (what the filter finds)."""

    PANE_ID = "numbers"
    COLUMNS = (("n", "N", 6), ("kind", "KIND", 6))
    SORT = ("n",)

    def cells(self, key: str, record: int) -> tuple[object, ...]:
        return (record, "even" if record % 2 == 0 else "odd")

    def search_fields(self, key: str, record: int) -> tuple[object, ...]:
        return ("even" if record % 2 == 0 else "odd",)


class NumbersApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Numbers()

    @property
    def pane(self) -> Numbers:
        return self.query_one(Numbers)


def fill(pane: Numbers) -> None:
    """Every number, put last first: the rows' order is the pane's, not the puts'."""
    for n in reversed(range(COUNT)):
        pane.put(f"n{n}", n)
    pane.finish()


async def test_any_pane_shows_a_first_screenful_of_its_filter_at_once_and_the_rest_in_chunks() -> (
    None
):
    app = NumbersApp()
    async with app.run_test(size=(40, 20)) as pilot:
        pane = app.pane
        fill(pane)
        assert pane.table.keys() == [f"n{n}" for n in range(COUNT)]
        pane.filter_text = "even"
        assert pane.table.row_count == FIRST_ROWS  # the rest after the paint
        assert len(pane._search) < COUNT  # searched only as far as the screenful needed
        evens = [f"n{n}" for n in range(0, COUNT, 2)]
        await until(pilot, lambda: pane.table.row_count == len(evens))
        assert pane.table.keys() == evens
        pane.filter_text = ""
        await until(pilot, lambda: pane.table.row_count == COUNT)
        assert pane.table.keys() == [f"n{n}" for n in range(COUNT)]


async def test_a_record_changed_before_the_fill_reaches_it_still_ends_in_its_place() -> None:
    app = NumbersApp()
    async with app.run_test(size=(40, 20)) as pilot:
        pane = app.pane
        fill(pane)
        pane.filter_text = "even"
        await until(pilot, lambda: pane.table.row_count == COUNT // 2)
        pane.filter_text = ""  # a screenful now, the rest in chunks
        pane.put("n1500", 1500)  # not reached yet, drawn ahead of the chunks
        pane.finish()
        await until(pilot, lambda: pane.table.row_count == COUNT)
        await pilot.pause(0.2)
        assert pane.table.keys() == [f"n{n}" for n in range(COUNT)]


async def test_a_row_whose_place_moves_moves_and_the_cursor_stays_on_its_row() -> None:
    app = NumbersApp()
    async with app.run_test(size=(40, 20)) as pilot:
        pane = app.pane
        for n in range(5):
            pane.put(f"n{n}", n)
        pane.finish()
        pane.select("n3")
        pane.put("n3", -1)  # its cell, and so its place, is first now
        pane.finish()
        await pilot.pause()
        assert pane.table.keys() == ["n3", "n0", "n1", "n2", "n4"]
        assert pane.table.cursor_key() == "n3"


class Placed(Numbers):
    """Numbers placed by their value (not by their cells, which a place would build)."""

    def order(self, key: str, record: int) -> int:
        return record


class PlacedApp(NumbersApp):
    def compose(self) -> ComposeResult:
        yield Placed()


async def test_a_record_changed_off_screen_is_built_when_it_is_next_drawn_as_it_is_then() -> None:
    app = PlacedApp()
    async with app.run_test(size=(40, 20)) as pilot:
        pane = app.pane
        fill(pane)
        await pilot.pause()
        built: list[str] = []
        cells = pane.cells

        def counted(key: str, record: int) -> tuple[object, ...]:
            built.append(key)
            return cells(key, record)

        pane.cells = counted  # type: ignore[method-assign]
        pane.put("n1800", 1800)  # the same place, off screen: nothing built yet
        pane.records["n1800"] = 1801  # changed again before it is seen (odd now)
        pane.finish()
        assert built == []
        pane.table.move_to("n1800")
        await pilot.pause()
        assert built == ["n1800"]
        assert pane.table.get_row("n1800") == [1801, "odd"]
