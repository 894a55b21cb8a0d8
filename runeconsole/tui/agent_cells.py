"""How one agent is drawn in the Agents pane: identity, hook phase and what its screen shows."""

from __future__ import annotations

import math

from rich.text import Text

from runeconsole.core.timeutil import format_age
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervisor import AgentObservation, SupervisorSettings
from runeconsole.tui.theme import LIVENESS_STYLE

COLUMNS = (
    ("dot", " ", 1),
    ("wait", " ", 1),
    ("role", "ROLE", 12),
    ("name", "NAME", 12),
    ("status", "STATUS", 10),
    ("seen", "SEEN", 6),
    ("phase", "PHASE", 12),
    ("context", "CONTEXT", 8),
    ("node", "NODE", 12),
    ("tmux", "TMUX", 24),
    ("predecessor", "PREDECESSOR", 40),  # fixed: a successor's may arrive after the row
)

# Work phases (ours), shortened to fit; the harness's phases are short already.
PHASE_LABELS = {
    "investigation": "investigate",
    "implementation": "implement",
    "completion": "complete",
}
WAIT_MARKS = {"permission": "!", "question": "?", "choice": "?"}


def context_meter(left: int | None, settings: SupervisorSettings) -> Text:
    """``▰▰▱▱ 42%``: context left until auto-compact, coloured by the cycling thresholds."""
    if left is None:
        return Text("")
    left = max(0, min(100, int(left)))
    filled = math.ceil(left / 25)  # any context left shows one block: 0 blocks means none
    style = "green"
    if left <= settings.handoff_at:
        style = "bold red"
    elif left <= settings.checkpoint_at:
        style = "red"
    elif left <= settings.warn_at:
        style = "yellow"
    percent = f" {left}%"
    return Text.assemble(
        ("▰" * filled, style),
        ("▱" * (4 - filled), "dim"),
        (percent, "" if style == "green" else style),
    )


def wait_mark(observation: AgentObservation | None) -> Text:
    if observation is None:
        return Text("")
    screen = observation.screen
    if screen.compacting:
        return Text("⟳", "bold magenta")
    mark = WAIT_MARKS.get(screen.waiting_for_input or "")
    return Text(mark, "bold yellow reverse") if mark else Text("")


def row_values(
    record: AgentRecord,
    phase: str | None,
    observation: AgentObservation | None,
    settings: SupervisorSettings,
) -> tuple[object, ...]:
    dot = Text("●", style=LIVENESS_STYLE[record.liveness])
    if record.error:
        return (
            dot,
            Text(""),
            Text(record.key),
            Text(""),
            Text("unreadable", style="bold red"),
            "-",
            Text(""),
            Text(""),
            "",
            "",
            Text(f"unreadable: {record.error}", style="red"),
        )
    status = record.status
    live = observation is not None and observation.state == "running"
    return (
        dot,
        wait_mark(observation) if live else Text(""),
        Text(str(record.get("role") or "")),
        Text(str(record.get("name") or "")),
        Text(status, style=LIVENESS_STYLE[record.liveness] if status != "active" else "default"),
        format_age(record.age_seconds),
        Text(PHASE_LABELS.get(phase or "", phase or ""), "cyan"),
        context_meter(observation.screen.context_left, settings) if live else Text(""),
        str(record.get("node_id") or ""),
        str(record.get("tmux_session") or ""),
        str(record.get("predecessor_id") or ""),
    )
