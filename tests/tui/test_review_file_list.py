"""The review's file list on its own: its keys and clicks say which file the reviewer
went to, following the diff says nothing, and a path wider than the list wraps."""

from __future__ import annotations

from textual.app import App, ComposeResult

from runeconsole.services.review.changes import FileChange
from runeconsole.tui.review.file_list import FileList

LONG = "src/deeper/path/name.py"  # with its numbers, wider than the list at 80 columns


class Lister(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.said: list[tuple[str, int]] = []

    def compose(self) -> ComposeResult:
        yield FileList(id="files")

    def on_file_list_highlighted(self, message: FileList.Highlighted) -> None:
        self.said.append(("highlighted", message.index))

    def on_file_list_selected(self, message: FileList.Selected) -> None:
        self.said.append(("selected", message.index))


def files(*paths: str) -> list[FileChange]:
    return [FileChange(path, added=n, removed=1) for n, path in enumerate(paths)]


async def test_keys_move_the_cursor_round_the_list_and_enter_selects_its_file() -> None:
    app = Lister()
    async with app.run_test(size=(80, 12)) as pilot:
        listing = app.query_one(FileList)
        listing.show_files(files("a.py", "b.py", "c.py"))
        listing.focus()
        await pilot.press("down", "up", "up", "end", "enter")
        await pilot.pause()
        assert app.said == [
            ("highlighted", 0),
            ("highlighted", 2),
            ("highlighted", 1),
            ("highlighted", 2),
            ("selected", 2),
        ]


async def test_following_the_diff_highlights_a_file_and_says_nothing() -> None:
    app = Lister()
    async with app.run_test(size=(80, 12)) as pilot:
        listing = app.query_one(FileList)
        listing.show_files(files("a.py", "b.py"))
        listing.follow(1)
        await pilot.pause()
        assert listing.highlighted == 1 and app.said == []
        listing.show_files(files("a.py", "b.py", "c.py"))  # another review: no cursor
        assert listing.highlighted is None and listing.count == 3


async def test_a_path_wider_than_the_list_wraps_and_a_click_on_any_of_its_lines_selects_it() -> (
    None
):
    app = Lister()
    async with app.run_test(size=(80, 12)) as pilot:
        listing = app.query_one(FileList)
        listing.show_files(files(LONG, "b.py"))
        await pilot.pause()
        assert listing.virtual_size.height == 3  # the long path on two lines, then b.py
        await pilot.click(FileList, offset=(2, 1))  # the long path's second line
        await pilot.click(FileList, offset=(2, 1))  # focused now: under the top border
        await pilot.click(FileList, offset=(2, 3))
        await pilot.pause()
        assert app.said == [
            ("highlighted", 0),
            ("selected", 0),
            ("selected", 0),
            ("highlighted", 1),
            ("selected", 1),
        ]
