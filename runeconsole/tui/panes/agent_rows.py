"""The Agents pane's rows beside their cells (``tui/cells/agent_cells.py``): what the filter looks
in, the order rows are kept in, the age that moves each second, and the fleet's objects
left out of the garbage collector's full passes once built."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from runeconsole.core.timeutil import format_age
from runeconsole.services.registry import AgentRecord
from runeconsole.tui.cells.agent_cells import cell, shown_name, task_of


def search_text(record: AgentRecord) -> str:
    """What the filter looks in, lower-cased once per read of the record."""
    values = (
        record.key,
        record.status,
        record.get("activity"),
        record.get("node_id"),
        record.get("tmux_session"),
        task_of(record),  # a task's id: its attempts, and nothing else
    )
    return " ".join(str(v) for v in values if v).lower()


def age_cell(record: AgentRecord, now: datetime) -> Text:
    return cell(format_age(record.age_at(now)))


def row_order(record: AgentRecord, source: str = "") -> tuple[str, str, str, str]:
    """Rows by source (the fleet console's), role, then name (as their cells show them:
    a task's attempts together), then key; an unreadable identity by its key (its role
    cell)."""
    if record.error:
        return (source, record.key, "", record.key)
    return (source, str(record.get("role") or ""), shown_name(record), record.key)


def as_shown(cells: Any) -> tuple[str, ...]:
    """The order of rows by the cells of their order columns, as they read."""
    return tuple(str(value) for value in cells)
