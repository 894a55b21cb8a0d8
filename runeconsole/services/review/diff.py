"""A unified diff (``git diff`` output) read into files, hunks and numbered lines.

Each changed file's section keeps its body lines as git wrote them (the first character
says what the line is: ``+`` added, ``-`` removed, a space for context, ``@`` a hunk
header, ``\\`` "no newline at end of file") with their old and new line numbers, so a
viewer draws any line by its index and a comment names the line the reviewer saw. One
pass over the text, no copy per line beyond the split: a 20,000-line file reads in
milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from runeconsole.core.gc_passes import collector_paused
from runeconsole.services.review.changes import Changes, FileChange

HUNK = re.compile(r"^@@+ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class FileDiff:
    """One file's part of the diff: ``lines`` (body lines, hunk headers included), their
    ``old`` and ``new`` line numbers (0 where a side has none) and where each hunk starts."""

    change: FileChange
    lines: list[str] = field(default_factory=list)
    old: list[int] = field(default_factory=list)
    new: list[int] = field(default_factory=list)
    hunks: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # "binary file", "mode 100644 → 100755"

    @property
    def path(self) -> str:
        return self.change.path


@dataclass
class ReviewDiff:
    """The changes and their diff, file by file in the changes' order."""

    changes: Changes
    files: list[FileDiff]
    text: str = ""

    def file(self, path: str) -> FileDiff | None:
        return next((f for f in self.files if path in (f.path, f.change.old_path)), None)


def _sections(text: str) -> list[list[str]]:
    sections: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
    if sections and sections[-1] and sections[-1][-1] == "":
        sections[-1].pop()  # the text's final newline
    return sections


def _read_section(change: FileChange, section: list[str]) -> FileDiff:
    diff = FileDiff(change)
    lines, old, new, hunks = diff.lines, diff.old, diff.new, diff.hunks
    index = 1
    while index < len(section) and not section[index].startswith("@@"):
        header = section[index]
        if header.startswith("Binary files"):
            diff.notes.append("binary file: not shown as text")
        elif header.startswith("old mode "):
            diff.notes.append(f"mode {header[9:]} → {section[index + 1][9:]}")
        index += 1
    old_no = new_no = 0
    for line in section[index:]:
        kind = line[:1]
        if kind == "@":
            found = HUNK.match(line)
            if found:
                old_no, new_no = int(found[1]), int(found[2])
            hunks.append(len(lines))
            lines.append(line)
            old.append(0)
            new.append(0)
        elif kind == "+":
            lines.append(line)
            old.append(0)
            new.append(new_no)
            new_no += 1
        elif kind == "-":
            lines.append(line)
            old.append(old_no)
            new.append(0)
            old_no += 1
        elif kind == "\\":
            lines.append(line)
            old.append(0)
            new.append(0)
        else:  # context (a space; an empty line is an empty context line)
            lines.append(line if kind == " " else " " + line)
            old.append(old_no)
            new.append(new_no)
            old_no += 1
            new_no += 1
    return diff


def read_patch(changes: Changes, text: str) -> ReviewDiff:
    """The diff of ``changes`` from ``text`` (git writes files in the same order as the
    changes list them; a section is matched to its file by path all the same)."""
    with collector_paused():  # tens of thousands of lines, none in a reference cycle
        return _read(changes, text)


def _read(changes: Changes, text: str) -> ReviewDiff:
    sections = _sections(text)
    files: list[FileDiff] = []
    unmatched = list(sections)
    for change in changes.files:
        suffix = f" b/{change.path}"
        found = next((s for s in unmatched if s[0].endswith(suffix)), None)
        if found is None:
            files.append(FileDiff(change, notes=["no diff shown"]))
            continue
        unmatched.remove(found)
        files.append(_read_section(change, found))
    return ReviewDiff(changes, files, text)
