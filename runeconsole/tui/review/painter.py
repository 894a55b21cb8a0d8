"""How each row of a review is drawn: a code line syntax-highlighted for its file's
language (Pygments, through Rich's ANSI theme, so it follows the terminal's colours) on
an added or removed tint, with its old and new line numbers in a gutter; headers, notes,
hunk lines and comments in their own styles. A row's highlighted text is made once and
kept (a few thousand rows), whatever the width, the cursor or the scroll."""

from __future__ import annotations

from pygments.lexer import Lexer
from rich.segment import Segment
from rich.style import Style
from rich.syntax import ANSI_DARK, ANSISyntaxTheme
from rich.text import Text
from textual.cache import LRUCache

from runeconsole.services.review.changes import ADDED as FILE_ADDED
from runeconsole.services.review.changes import DELETED, RENAMED
from runeconsole.tui.review.document import (
    ADDED,
    CODE,
    COMMENT,
    COMMIT,
    CONTEXT,
    FILE,
    HUNK,
    NO_NEWLINE,
    NOTE,
    REMOVED,
    TITLE,
    Document,
)
from runeconsole.tui.review.lexers import lexer_for

THEME = ANSISyntaxTheme(ANSI_DARK)
ADDED_BG = Style(bgcolor="#12361d")
REMOVED_BG = Style(bgcolor="#41161b")
FILE_BG = Style(bgcolor="#23304a", bold=True)
CURSOR_BG = Style(bgcolor="#3b4f7a")
MATCH = Style(color="black", bgcolor="yellow")
ROW_BG = {ADDED: ADDED_BG, REMOVED: REMOVED_BG, FILE: FILE_BG}
GUTTER_MARK = {
    ADDED: ("+", Style(color="green", bold=True)),
    REMOVED: ("-", Style(color="red", bold=True)),
}
DIM, PLAIN, COMMENT_BAR = Style(dim=True), Style(), Style(color="yellow")
STATUS_MARK = {FILE_ADDED: ("A", "bold green"), DELETED: ("D", "bold red"), RENAMED: ("R", "cyan")}
KEPT_TEXTS = 4000
BLOCK = 64  # rows highlighted together
MAX_HIGHLIGHT = 2000  # characters: a longer line (minified code) is drawn plain


def highlighted(lines: list[str], lexer: Lexer | None) -> list[Text]:
    """``lines`` highlighted in one pass of the lexer (one call per line costs several
    times as much, and loses what a line before says: a docstring's opening quotes)."""
    if lexer is None:
        return [Text(line) for line in lines]
    long = [len(line) > MAX_HIGHLIGHT for line in lines]
    code = "\n".join("" if too_long else line for line, too_long in zip(lines, long, strict=True))
    texts = [Text()]
    style_for = THEME.get_style_for_token
    for token, value in lexer.get_tokens(code):
        style = style_for(token)
        first, *rest = value.split("\n")
        if first:
            texts[-1].append(first, style)
        for part in rest:
            texts.append(Text(part, style) if part else Text())
    texts += [Text() for _ in range(len(lines) - len(texts))]
    return [
        Text(line) if too_long else text
        for line, text, too_long in zip(lines, texts, long, strict=True)
    ]


class Painter:
    """Rows of one document as Rich ``Text``: the gutter, and the body."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.width = document.number_width
        self._texts: LRUCache[int, Text] = LRUCache(KEPT_TEXTS)

    @property
    def gutter_width(self) -> int:
        return 2 * self.width + 4  # old, new, the mark and their spaces

    def gutter(self, row: int, continued: bool = False) -> list[Segment]:
        """The row's line numbers and mark: the segments a ``Text`` of them would render
        to, made directly (a screen of them is a few milliseconds of a review's opening)."""
        kind, _, old, new, _ = self.document.rows[row]
        width = self.width
        if continued or kind not in CODE:
            blank = " " * (2 * width + 2)
            if kind == COMMENT:
                return [Segment(blank, PLAIN), Segment("┃ ", COMMENT_BAR)]
            return [Segment(blank + "  ")]
        numbers = Segment(f"{old or '':>{width}} {new or '':>{width}} ", DIM)
        if kind == CONTEXT:
            return [numbers, Segment("  ", PLAIN)]
        mark, style = GUTTER_MARK[kind]
        return [numbers, Segment(mark, style), Segment(" ", PLAIN)]

    def body(self, row: int) -> Text:
        """The row's own text, styled (kept: the same row is asked for on every scroll)."""
        found = self._texts.get(row)
        if found is None:
            if self.document.rows[row][0] in CODE:
                self._highlight_block(row)
                found = self._texts.get(row)
            if found is None:
                found = self._body(row)
                self._texts[row] = found
        return found

    def _highlight_block(self, row: int) -> None:
        """The code rows of ``row``'s file in its block of ``BLOCK`` rows, highlighted in
        one pass; blocks are fixed by row number, so a line is drawn the same whichever
        way the screen reached it."""
        rows = self.document.rows
        index = rows[row][4]
        start = row - row % BLOCK
        wanted = [
            n for n in range(start, min(start + BLOCK, len(rows)))
            if rows[n][4] == index and rows[n][0] in CODE
        ]  # fmt: skip
        lexer = lexer_for(self.document.diff.files[index].path)
        for n, text in zip(wanted, highlighted([rows[n][1] for n in wanted], lexer), strict=True):
            self._texts[n] = text

    def _body(self, row: int) -> Text:
        kind, text, _, _, index = self.document.rows[row]
        if kind in CODE:
            return highlighted([text], lexer_for(self.document.diff.files[index].path))[0]
        if kind == FILE:
            return self._file_header(index)
        if kind == HUNK:
            return Text(text, "cyan")
        if kind == COMMENT:
            return Text(f"✎ {text}", "bold yellow")
        if kind == NOTE:
            return Text(text, "italic dim")
        if kind == TITLE:
            return Text(text, "bold")
        if kind == COMMIT:
            sha, _, rest = text.partition(" ")
            return Text.assemble((sha, "yellow"), " ", rest)
        if kind == NO_NEWLINE:
            return Text(text, "dim")
        return Text(text)

    def _file_header(self, index: int) -> Text:
        change = self.document.diff.files[index].change
        mark, style = STATUS_MARK.get(change.status, ("M", "bold yellow"))
        numbers = (
            Text("binary", "magenta")
            if change.binary
            else Text.assemble((f"+{change.added}", "green"), " ", (f"−{change.removed}", "red"))
        )
        return Text.assemble(
            (mark, style),
            " ",
            (change.shown_path, "bold"),
            "  ",
            numbers,
            ("  " + ", ".join(change.where), "dim"),
        )

    @staticmethod
    def background(kind: str, cursor: bool) -> Style:
        if cursor:
            return CURSOR_BG
        return ROW_BG.get(kind, Style())
