"""What the review screen scrolls through, one row per line on screen: the commits
ahead, then each file (a header, its notes, its hunks and lines), with the open
review's comments under the lines they are on.

A row is a small tuple (``kind``, text, old line, new line, file index), so a
20,000-line diff is 20,000 tuples built in milliseconds, and the view draws only the
rows on screen. ``files`` and ``hunks`` hold where each file and hunk starts, for
``n``/``p`` and ``]``/``[``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from datetime import UTC, datetime

from runeconsole.services.review.diff import ReviewDiff
from runeconsole.services.review.records import OLD, Comment

# Row kinds.
TITLE, COMMIT, FILE, NOTE, HUNK, COMMENT, BLANK = "title", "commit", "file", "note", "@", "c", ""
ADDED, REMOVED, CONTEXT, NO_NEWLINE = "+", "-", " ", "\\"
CODE = frozenset({ADDED, REMOVED, CONTEXT})
TAB = 4

Row = tuple[str, str, int, int, int]  # kind, text, old line, new line, file index (-1: none)


def _when(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d") if epoch else ""


class Document:
    def __init__(self, diff: ReviewDiff, comments: Sequence[Comment] = ()) -> None:
        self.diff = diff
        self.comments = list(comments)
        self.rows: list[Row] = []
        self.files: list[int] = []  # the row where each file starts (its header)
        self.hunks: list[int] = []  # every hunk header's row
        self.number_width = 1
        self._build(diff, list(comments))

    def __len__(self) -> int:
        return len(self.rows)

    def _build(self, diff: ReviewDiff, comments: list[Comment]) -> None:
        rows, add = self.rows, self.rows.append
        changes = diff.changes
        base = (changes.base_ref or "").removeprefix("refs/heads/")
        if changes.commits or changes.ahead:
            count = changes.ahead
            add((TITLE, f"{count} commit{'s' * (count != 1)} ahead of {base}", 0, 0, -1))
            for c in changes.commits:
                add((COMMIT, f"{c.short} {c.subject}  ({c.author}, {_when(c.when)})", 0, 0, -1))
            if count > len(changes.commits):
                add((COMMIT, f"… and {count - len(changes.commits)} more", 0, 0, -1))
        for comment in [c for c in comments if c.file is None]:
            add((COMMENT, comment.text, 0, 0, -1))
        if changes.error:
            add((NOTE, changes.error, 0, 0, -1))
        elif not diff.files:
            add((NOTE, "no changes against " + (base or "the base"), 0, 0, -1))
        widest = 0
        for index, file in enumerate(diff.files):
            if rows:
                add((BLANK, "", 0, 0, index))
            self.files.append(len(rows))
            add((FILE, file.change.shown_path, 0, 0, index))
            notes = list(file.notes)
            if file.change.old_path and file.change.similarity is not None:
                notes.insert(0, f"renamed from {file.change.old_path} ({file.change.similarity}%)")
            for note in notes:
                add((NOTE, note, 0, 0, index))
            mine = [c for c in comments if c.file == file.path]
            for comment in [c for c in mine if c.line is None]:
                add((COMMENT, comment.text, 0, 0, index))
            on_lines = {(c.side, c.line): c for c in mine if c.line is not None}
            old, new, hunks = file.old, file.new, set(file.hunks)
            for at, line in enumerate(file.lines):
                kind = line[:1]
                if at in hunks:
                    self.hunks.append(len(rows))
                    add((HUNK, line, 0, 0, index))
                    continue
                text = line[1:].expandtabs(TAB) if "\t" in line else line[1:]
                add((kind, text, old[at], new[at], index))
                widest = max(widest, old[at], new[at])
                if on_lines:
                    said = on_lines.get((OLD, old[at])) if kind == REMOVED else None
                    said = said or (on_lines.get(("new", new[at])) if kind != REMOVED else None)
                    if said is not None:
                        add((COMMENT, said.text, 0, 0, index))
        self.number_width = max(1, len(str(widest)))

    # -- moving about --------------------------------------------------------------------

    def file_at(self, row: int) -> int:
        """The file a row belongs to (-1 above the first file)."""
        found = bisect_right(self.files, row) - 1
        return found

    def next_start(self, starts: list[int], row: int) -> int | None:
        at = bisect_right(starts, row)
        return starts[at] if at < len(starts) else None

    def previous_start(self, starts: list[int], row: int) -> int | None:
        at = bisect_left(starts, row) - 1
        return starts[at] if at >= 0 else None

    def search(self, text: str, row: int, *, forward: bool = True) -> int | None:
        """The next (or previous) row after ``row`` whose text holds ``text`` (any case),
        wrapping around."""
        needle = text.lower()
        rows = self.rows
        count = len(rows)
        order = range(1, count + 1) if forward else range(-1, -count - 1, -1)
        for step in order:
            at = (row + step) % count
            if needle in rows[at][1].lower():
                return at
        return None

    def target(self, row: int) -> tuple[str, int, str] | None:
        """What a comment on ``row`` points at: (file, line, side), or None for a row
        that is no line of a file (a header, a hunk line)."""
        kind, _, old, new, index = self.rows[row]
        if kind not in CODE or index < 0:
            return None
        file = self.diff.files[index]
        if kind == REMOVED:
            return file.path, old, OLD  # the file as the diff names it; the line before
        return file.path, new, "new"
