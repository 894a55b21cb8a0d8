"""The review screen's keys: the line under the diff, and the list ``?`` shows."""

from __future__ import annotations

from rich.text import Text

# The keys, in one line (a Footer is a widget per key, restyled on every focus change:
# most of what opening the screen cost).
KEYS = Text.assemble(
    *(
        part
        for key, what in (
            ("n/p", "file"),
            ("]/[", "hunk"),
            ("c", "comment"),
            ("S", "send"),
            ("A", "approve"),
            ("/", "search"),
            ("?", "keys"),
            ("esc", "close"),
            ("C", "on all"),
            ("w", "wrap"),
            ("f", "files"),
        )
        for part in ((f" {key} ", "bold yellow"), (what + " ", ""))
    )
)


HELP = (
    ("j / k, ↑ / ↓", "move the cursor line; space / b, pgdn / pgup: a page"),
    ("n / p", "next / previous file"),
    ("] / [", "next / previous hunk"),
    ("/  . ,", "search; next / previous match"),
    ("w", "wrap long lines"),
    ("f", "show / hide the file list"),
    ("c / C", "comment on the line under the cursor / on the whole change"),
    ("S", "send the comments to the agent, as one prompt"),
    ("A", "approve: the branch joins the merge queue"),
    ("tab", "between the file list and the diff (a folded list shows meanwhile)"),
    ("r", "read the changes again"),
    ("esc / q", "close the review"),
)
