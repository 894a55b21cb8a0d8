"""Compare snapshot SVGs cell by cell: what a terminal would show, not how the SVG says it.

Two screenshots of the same screen can differ as text while every cell looks the same:
Rich's SVG export writes one ``<text>`` per run of one style and none for a run of
blanks, so where a run starts (one segment or two) changes the file. This reads each
SVG into a grid of cells (the character, its background, and for a character that is
not blank its colour and weight) and prints the cells that differ; it exits 1 if any
does.

    python scripts/snapshot_cells.py OLD.svg NEW.svg
    python scripts/snapshot_cells.py --against REV [SVG ...]   # each file as of git REV

With ``--against`` and no files, every snapshot under ``tests/tui/__snapshots__`` that
differs from ``REV`` as text is compared.
"""

from __future__ import annotations

import argparse
import html
import re
import subprocess
import sys
from pathlib import Path

CELL_WIDTH, LINE_HEIGHT = 12.2, 24.4  # Rich's SVG export: a cell is 12.2 x 24.4 units
BLANKS = ("", " ", "\xa0")
STYLE = re.compile(r"\.terminal-(r\d+) \{ ([^}]*) \}")
RECT = re.compile(r'<rect fill="(#[0-9a-f]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"')
TEXT = re.compile(
    r'<text class="terminal-(r\d+)" x="([\d.]+)" y="([\d.]+)" textLength="[\d.]+" '
    r'clip-path="[^"]*">([^<]*)</text>'
)

Cell = tuple[str, str, str]  # character, its colour and weight, background


def cells(svg: str) -> dict[tuple[int, int], Cell]:
    """(line, column) -> cell, blanks without a colour (a blank shows none)."""
    styles = dict(STYLE.findall(svg))
    grid: dict[tuple[int, int], list[str]] = {}
    for fill, x, y, width in RECT.findall(svg):
        line, first = round((float(y) - 1.5) / LINE_HEIGHT), round(float(x) / CELL_WIDTH)
        for column in range(first, first + round(float(width) / CELL_WIDTH)):
            grid.setdefault((line, column), [" ", "", ""])[2] = fill
    for style, x, y, text in TEXT.findall(svg):
        line, first = round((float(y) - 20) / LINE_HEIGHT), round(float(x) / CELL_WIDTH)
        for offset, char in enumerate(html.unescape(text)):
            cell = grid.setdefault((line, first + offset), [" ", "", ""])
            cell[0], cell[1] = (" ", "") if char in BLANKS else (char, styles.get(style, style))
    return {place: (cell[0], cell[1], cell[2]) for place, cell in grid.items()}


def differences(old: str, new: str) -> list[str]:
    before, after = cells(old), cells(new)
    blank: Cell = (" ", "", "")
    return [
        f"line {line}, column {column}: {before.get((line, column), blank)} -> "
        f"{after.get((line, column), blank)}"
        for line, column in sorted(before.keys() | after.keys())
        if before.get((line, column), blank) != after.get((line, column), blank)
    ]


def at_revision(revision: str, path: Path) -> str:
    shown = subprocess.run(
        ["git", "show", f"{revision}:{path.as_posix()}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout


def changed_snapshots(revision: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "diff", "--name-only", revision, "--", "tests/tui/__snapshots__"],
        capture_output=True,
        text=True,
        check=True,
    )
    return [Path(name) for name in listed.stdout.split() if name.endswith(".svg")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--against", metavar="REV", help="compare each file with git REV's")
    args = parser.parse_args()
    if args.against:
        pairs = [
            (f"{args.against}:{path}", at_revision(args.against, path), path.read_text())
            for path in args.files or changed_snapshots(args.against)
        ]
    elif len(args.files) == 2:
        old, new = args.files
        pairs = [(f"{old} -> {new}", old.read_text(), new.read_text())]
    else:
        parser.error("give OLD.svg NEW.svg, or --against REV")
    found = False
    for name, old, new in pairs:
        differing = differences(old, new)
        found |= bool(differing)
        print(f"{name}: {len(differing)} cells differ")
        for line in differing[:20]:
            print(f"  {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
