"""Colours shared by panes (liveness dots, verdicts)."""

LIVENESS_STYLE = {
    "green": "bold green",
    "yellow": "bold yellow",
    "red": "bold red",
    "grey": "dim",
}
