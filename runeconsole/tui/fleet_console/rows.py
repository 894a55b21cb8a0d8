"""How the fleet console draws the rows of ``runeconsole events --fleet``: one function
per kind from the row's JSON (the stream's own ``to_json`` shapes) to its cells, with
the source first. Agents are drawn by the local console's own cells
(``tui/agent_cells.py``) from a record decoded from the row."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from runeconsole.core.timeutil import format_age, parse_iso
from runeconsole.services.claude.permissions import PENDING
from runeconsole.services.liveness import GREEN, RED, YELLOW, AgentRecord
from runeconsole.services.questions import format_left
from runeconsole.services.sources import CONNECTING, DOWN, UP
from runeconsole.services.supervisor import AgentObservation, SupervisorSettings
from runeconsole.tui import agent_cells, permissions_pane, problems_pane
from runeconsole.tui.merge_queue_rows import STATUS_STYLE
from runeconsole.tui.theme import LIVENESS_STYLE, VERDICT_STYLE

Row = dict[str, Any]

SOURCE_COLUMN = ("source", "SOURCE", 10)
SOURCE_COLUMNS = (
    ("state", " ", 1),
    ("source", "SOURCE", 10),
    ("agents", "  ●   ●   ●", 12),
    ("problems", "PROB", 4),
    ("questions", "ASKS", 4),
    ("queue", "QUEUE", 5),
    ("detail", "WHERE · STATE (down: why)", None),
)
AGENT_COLUMNS = (SOURCE_COLUMN, *agent_cells.COLUMNS)
QUESTION_COLUMNS = (
    ("urgency", " ", 1),
    SOURCE_COLUMN,
    ("task", "TASK", 9),
    ("worker", "WORKER", 14),
    ("age", "AGE", 6),
    ("left", "TIMEOUT", 7),
    ("question", "QUESTION", None),
)
QUEUE_COLUMNS = (
    SOURCE_COLUMN,
    ("position", "#", 3),
    ("status", "STATUS", 11),
    ("branch", "BRANCH", 24),
    ("node", "NODE", 14),
    ("detail", "ERROR / REASON", None),
)
PROBLEM_COLUMNS = (SOURCE_COLUMN, *problems_pane.COLUMNS)
PERMISSION_COLUMNS = (permissions_pane.COLUMNS[0], SOURCE_COLUMN, *permissions_pane.COLUMNS[1:])
SUSPENDED_COLUMNS = (
    SOURCE_COLUMN,
    ("verdict", "VERDICT", 10),
    ("task", "TASK", 5),
    ("worker", "WORKER", 14),
    ("age", "AGE", 6),
    ("detail", "CONTEXT FILE · DETAIL", None),
)
STATE_STYLE = {UP: "green", CONNECTING: "yellow", DOWN: "bold red"}


def text(value: Any, style: str = "") -> Text:
    """A cell as written (``Text``: a value from another host is never parsed as markup)."""
    return Text("" if value is None else str(value), style=style)


# -- sources -------------------------------------------------------------------------------


def source_row(name: str, state: Row, counts: dict[str, int]) -> tuple[Any, ...]:
    shown = str(state.get("state") or CONNECTING)
    style = STATE_STYLE.get(shown, "")
    host, root = state.get("host"), str(state.get("root") or "")
    if shown == DOWN:  # why first: it is what the operator needs, in any width
        detail = Text.assemble(("down: ", style), (str(state.get("reason") or "?"), "red"))
    else:
        where = f"{host}:{root}" if host else root
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
        text(name, "bold"),
        agents if up else Text(""),
        text(problems if up else "", "bold red" if problems else ""),
        text(counts.get("questions", 0) if up else ""),
        text(counts.get("queue", 0) if up else ""),
        detail,
    )


# -- agents --------------------------------------------------------------------------------


def agent_record(key: str, row: Row) -> AgentRecord:
    return AgentRecord.from_json(row, key)


def observation_of(row: Row | None) -> AgentObservation | None:
    if not row:
        return None
    try:
        return AgentObservation.from_json(row)
    except (KeyError, TypeError, ValueError):  # another version's shape: drawn without it
        return None


def agent_row(
    source: str,
    record: AgentRecord,
    phase: str | None,
    observation: AgentObservation | None,
    settings: SupervisorSettings,
    now: datetime,
) -> tuple[Any, ...]:
    return (text(source), *agent_cells.row_values(record, phase, observation, settings, now))


def problem_row(source: str, row: Row) -> tuple[Any, ...]:
    kind = str(row.get("kind"))
    return (
        text(source),
        text(kind, problems_pane.KIND_STYLE.get(kind, "")),
        text(row.get("agent")),
        text(row.get("detail")),
    )


# -- questions -----------------------------------------------------------------------------


def question_row(source: str, row: Row) -> tuple[Any, ...]:
    if row.get("error"):
        return (
            Text("?", style="bold red"),
            text(source),
            text(row.get("task_id")),
            Text(""),
            Text(""),
            Text("-", style="dim"),
            Text(f"unreadable: {row['error']}", style="red"),
        )
    blocking = row.get("urgency") == "blocking"
    mark = Text("●", style="bold red") if blocking else Text("○", style="yellow")
    left = row.get("seconds_left")
    seq = row.get("seq") or 1
    task = row.get("task_id") if seq == 1 else f"{row.get('task_id')}.q{seq}"
    first_line = str(row.get("question") or "").strip().splitlines()
    return (
        mark,
        text(source),
        text(task),
        text(row.get("worker_name")),
        text(format_age(row.get("age_seconds"))),
        Text("never", style="dim") if left is None else text(format_left(left)),
        text(first_line[0] if first_line else ""),
    )


def question_open(row: Row) -> bool:
    return not row.get("error") and row.get("state") == "pending"


def permission_open(row: Row) -> bool:
    return row.get("state") == PENDING


def permission_row(source: str, row: Row, now: datetime) -> tuple[Any, ...]:
    """As the project console's Permissions pane draws a request, from its JSON."""
    symbol, style = permissions_pane.MARKS.get(str(row.get("state")), ("?", "bold red"))
    waiting = permission_open(row)
    asked = parse_iso(row.get("asked_at"))
    error = row.get("error")
    return (
        Text(symbol, style),
        text(source),
        text(row.get("agent")),
        text(row.get("tool")),
        text(format_age((now - asked).total_seconds()) if asked else "-"),
        permissions_pane.waits(parse_iso(row.get("expires_at")) if waiting else None, now),
        permissions_pane.what_text(
            str(row.get("subject") or ""),
            None if waiting else str(row.get("outcome") or row.get("state")),
            None if error is None else str(error),
        ),
    )


# -- the merge queue and suspended tasks ---------------------------------------------------


def queue_row(source: str, row: Row) -> tuple[Any, ...]:
    status = str(row.get("status") or "?")
    return (
        text(source),
        text(row.get("position")),
        text(status, STATUS_STYLE.get(status, "")),
        text(row.get("branch")),
        text(row.get("node_id")),
        text(row.get("error") or row.get("reason"), "red" if row.get("error") else "dim"),
    )


def suspended_row(source: str, row: Row) -> tuple[Any, ...]:
    verdict = str(row.get("verdict") or "?")
    detail = row.get("detail") or row.get("error") or ""
    return (
        text(source),
        text(verdict, VERDICT_STYLE.get(verdict, "")),
        text(row.get("task_id")),
        text(row.get("worker")),
        text(format_age(row.get("age_seconds"))),
        Text.assemble((str(row.get("key") or ""), "dim"), (f"  {detail}" if detail else "", "")),
    )
