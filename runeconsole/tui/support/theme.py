"""Colours and marks shared by panes and their detail screens (liveness dots, context-file
verdicts, checkpoint phases and actions)."""

from runeconsole.services.suspension import CORRUPT, EXHAUSTED, OK, STALE, UNREADABLE

LIVENESS_STYLE = {
    "green": "bold green",
    "yellow": "bold yellow",
    "red": "bold red",
    "grey": "dim",
}
VERDICT_STYLE = {
    OK: "bold green",
    STALE: "bold yellow",
    EXHAUSTED: "dim",
    CORRUPT: "bold red",
    UNREADABLE: "bold red",
}
# One mark per phase: what it looks like, and its colour.
PHASE_MARK = {
    "completed": ("●", "green"),
    "skipped": ("·", "dim"),
    "pending": ("○", ""),
    "in_progress": ("◐", "bold yellow"),
    "failed": ("✗", "bold red"),
    "timeout": ("✗", "bold red"),
    "cancelled": ("⊘", "dim"),
    "absent": ("╌", "dim"),
}
DEMOTED_MARK = ("!", "bold magenta")
ACTION_STYLE = {
    "resume": "yellow",
    "complete": "green",
    "active": "bold yellow",
    "newer": "bold cyan",
    "blocked": "bold red",
    "fresh_start": "bold red",
}
