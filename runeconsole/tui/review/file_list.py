"""The review's file list: each changed file with its status and lines added and removed;
the file under the diff's cursor is highlighted, ``enter`` takes the diff to a file."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from runeconsole.services.review.changes import FileChange
from runeconsole.tui.review.painter import STATUS_MARK


def file_line(change: FileChange) -> Text:
    mark, style = STATUS_MARK.get(change.status, ("M", "bold yellow"))
    numbers = (
        Text("bin", "magenta")
        if change.binary
        else Text.assemble((f"+{change.added}", "green"), (f" −{change.removed}", "red"))
    )
    return Text.assemble((mark, style), " ", numbers, " ", change.shown_path)


class FileList(OptionList):
    files: list[FileChange] = []  # what the options show
    DEFAULT_CSS = """
    FileList {
        width: 34%;
        max-width: 60;
        min-width: 24;
        height: 1fr;
        border: none;
        border-right: vkey $panel;
        padding: 0;
    }
    FileList.-hidden {
        display: none;
    }
    """

    def show_files(self, files: list[FileChange]) -> None:
        """Show ``files``: as many as shown already, only the lines that changed are
        replaced (no new layout, as when an agent's numbers move); else the list anew."""
        if files == self.files and self.option_count == len(files):
            return  # the same review again
        if self.option_count == len(files) == len(self.files):
            for index, (was, now) in enumerate(zip(self.files, files, strict=True)):
                if was != now:
                    self.replace_option_prompt_at_index(index, file_line(now))
            self.files = list(files)
            return
        self.files = list(files)
        self.clear_options()
        self.add_options([Option(file_line(f), id=str(n)) for n, f in enumerate(files)])

    def follow(self, index: int) -> None:
        """Highlight the file the diff's cursor is in (without moving the diff)."""
        if 0 <= index < self.option_count and self.highlighted != index:
            with self.prevent(OptionList.OptionHighlighted):
                self.highlighted = index
