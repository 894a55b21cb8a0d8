"""How the fleet console draws a source: its state, its agents by colour, its problems,
open questions and queue, and where it is (down: why, first)."""

from __future__ import annotations

from rich.text import Text

from runeconsole.services.liveness import GREEN, RED, YELLOW
from runeconsole.services.sources import CONNECTING, DOWN, UP
from runeconsole.services.sources.decode import SourceState
from runeconsole.tui.theme import LIVENESS_STYLE

SOURCE_COLUMNS = (
    ("state", " ", 1),
    ("source", "SOURCE", 10),
    ("agents", "  ●   ●   ●", 12),
    ("problems", "PROB", 4),
    ("questions", "ASKS", 4),
    ("queue", "QUEUE", 5),
    ("detail", "WHERE · STATE (down: why)", None),
)
STATE_STYLE = {UP: "green", CONNECTING: "yellow", DOWN: "bold red"}


def source_row(state: SourceState, counts: dict[str, int]) -> tuple[object, ...]:
    shown = state.state
    style = STATE_STYLE.get(shown, "")
    if shown == DOWN:  # why first: it is what the operator needs, in any width
        detail = Text.assemble(("down: ", style), (state.reason or "?", "red"))
    else:
        where = f"{state.host}:{state.root}" if state.host else state.root
        detail = Text.assemble((where, ""), (f"  {shown}", style))
    up = shown == UP
    agents = Text.assemble(
        *(
            (f"{counts.get(colour, 0):>4}", LIVENESS_STYLE[colour])
            for colour in (GREEN, YELLOW, RED)
        )
    )
    problems = counts.get("problems", 0)
    return (
        Text("●", style=style),
        Text(state.name, "bold"),
        agents if up else Text(""),
        Text(str(problems) if up else "", "bold red" if problems else ""),
        Text(str(counts.get("questions", 0)) if up else ""),
        Text(str(counts.get("queue", 0)) if up else ""),
        detail,
    )
