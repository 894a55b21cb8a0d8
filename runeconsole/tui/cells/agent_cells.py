"""How one agent is drawn in the Agents pane: identity, hook phase and what its screen shows;
its age (the cell that moves each second), its place among the rows and the words the
filter looks in; its cost as every room draws it (``dollars``, ``spent``, ``cost_words``:
the detail window, the allowance window, the tasks' cells, the consoles' top lines)."""

from __future__ import annotations

import math
from datetime import datetime
from functools import lru_cache

from rich.text import Text

from runeconsole.core.timeutil import format_age
from runeconsole.services.claude.session.activity import STOPPED
from runeconsole.services.claude.session.session_view import last_line
from runeconsole.services.claude.session.view import AgentView, agent_view
from runeconsole.services.cost.ledger import local_day
from runeconsole.services.cost.summary import AgentCost, from_fields
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervision.service import AgentObservation, SupervisorSettings
from runeconsole.tui.support.theme import LIVENESS_STYLE

NAME_WIDTH = 12
COLUMNS = (
    ("dot", " ", 1),
    ("wait", " ", 1),
    ("role", "ROLE", 12),
    ("name", "NAME", NAME_WIDTH),  # an attempt of a task keeps its number in sight
    ("status", "STATUS", 10),  # an active agent's shows what it is doing, when known
    ("seen", "SEEN", 6),
    ("phase", "PHASE", 12),
    ("context", "CONTEXT", 8),
    ("tokens", "TOKENS", 6),
    ("cost", "COST", 7),  # so far; ~ estimated; yellow past 80 % of a budget, red held
    ("node", "NODE", 12),
    ("tmux", "TMUX", 24),
    ("predecessor", "PREDECESSOR", 40),  # fixed: a successor's may arrive after the row
)
# Shown when asked for (``runeconsole.agents.columns`` in talisman.yml), after the others.
OPTIONAL_COLUMNS = {
    "message": ("message", "LAST MESSAGE", 60),  # the last line of its last message
}

# Work phases (ours), shortened to fit; the harness's phases are short already.
PHASE_LABELS = {
    "investigation": "investigate",
    "implementation": "implement",
    "completion": "complete",
}
ACTIVITY_STYLE = {
    "busy": "green",
    "idle": "dim",
    "waiting": "bold yellow",
    "compacting": "bold magenta",
    "ended": "dim",
    STOPPED: "bold red",  # its turn ended on an API error (the Problems pane says which)
}


def _now() -> datetime:
    return datetime.now().astimezone()


@lru_cache(maxsize=4096)
def cell(text: str, style: str = "") -> Text:
    """A cell's ``Text``, one instance per text and style: most cells of a large fleet are
    the same few words, and building a ``Text`` (which strips control codes) is a third
    of building a row. Cells are never changed in place, so rows can share them."""
    return Text(text, style=style)


def task_of(record: AgentRecord) -> str | None:
    """The task an agent is an attempt of (``runeconsole new`` sets ``metadata.task_id``)."""
    metadata = record.fields.get("metadata")
    task = metadata.get("task_id") if isinstance(metadata, dict) else None
    return task if isinstance(task, str) and task else None


def shown_name(record: AgentRecord) -> str:
    """The name as the NAME column shows it: an attempt's name (its task's id, then
    ``-N``) too long for the column is cut in the middle, so the attempts of one task
    read apart and sit together (``fix-login…-2``); any other name as it is."""
    name = str(record.get("name") or "")
    task = task_of(record) if len(name) > NAME_WIDTH else None
    if task is None or not name.startswith(task) or len(name) == len(task):
        return name
    tail = name[len(task) :]
    if len(tail) >= NAME_WIDTH - 2:
        return name
    return name[: NAME_WIDTH - len(tail) - 1] + "…" + tail


def search_fields(record: AgentRecord) -> tuple[object, ...]:
    """What the filter looks in: the agent's key, status, activity, node, tmux session
    and task (a task's id: its attempts, and nothing else)."""
    return (
        record.key,
        record.status,
        record.get("activity"),
        record.get("node_id"),
        record.get("tmux_session"),
        task_of(record),
    )


def row_order(record: AgentRecord, source: str = "") -> tuple[str, str, str, str]:
    """Rows by source (the fleet console's), role, then name (as their cells show them:
    a task's attempts together), then key; an unreadable identity by its key (its role
    cell)."""
    if record.error:
        return (source, record.key, "", record.key)
    return (source, str(record.get("role") or ""), shown_name(record), record.key)


def age_cell(record: AgentRecord, now: datetime) -> Text:
    """SEEN: how long ago the agent was last heard of, as of ``now``."""
    return cell(format_age(record.age_at(now)))


def name_cell(record: AgentRecord) -> Text:
    return Text(shown_name(record))


def context_meter(left: int | None, settings: SupervisorSettings) -> Text:
    """``▰▰▱▱ 42%``: context left until auto-compact, coloured by the cycling thresholds."""
    if left is None:
        return cell("")
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


def wait_mark(view: AgentView) -> Text:
    """``!`` waiting for a permission, ``?`` for an answer, ``⟳`` compacting, ``✗``
    stopped on an API error."""
    if view.compacting:
        return Text("⟳", "bold magenta")
    if view.activity == STOPPED:
        return Text("✗", "bold red reverse")
    if view.waiting:
        return Text("!" if view.wants_permission else "?", "bold yellow reverse")
    return cell("")


def token_count(view: AgentView) -> Text:
    """Tokens the session used, in all (``182k``, ``1.2M``), when the hooks told."""
    total = view.total_tokens
    if total is None:
        return cell("")
    if total < 1000:
        return Text(str(total), "dim")
    if total < 1_000_000:
        return Text(f"{total / 1000:.0f}k" if total >= 10_000 else f"{total / 1000:.1f}k")
    return Text(f"{total / 1_000_000:.1f}M", "bold")


BUDGET_STYLE = {"warn": "bold yellow", "held": "bold red reverse"}


def dollars(usd: float) -> str:
    """``$0.42``, ``$12.30``, ``$123``, ``$1.2k``: fits the COST column."""
    if usd < 100:
        return f"${usd:.2f}"
    if usd < 10_000:
        return f"${usd:.0f}"
    return f"${usd / 1000:.1f}k"


def cost_cell(cost: AgentCost | None) -> Text:
    """What the agent cost so far (``~``: estimated from its transcript), coloured by its
    budget."""
    if cost is None:
        return cell("")
    text = ("~" if cost.estimated else "") + dollars(cost.usd)
    return cell(text, BUDGET_STYLE.get(cost.budget, "dim" if cost.estimated else ""))


def spent(record: AgentRecord, now: datetime | None) -> AgentCost | None:
    """The identity's ``cost`` as of today (``now``'s local date)."""
    if "cost" not in record.fields:  # most rows of a large fleet: no date worked out
        return None
    return from_fields(record.key, record.fields, _local_day(now or record.seen or _now()))


@lru_cache(maxsize=16)
def _local_day(moment: datetime) -> str:
    """``local_day``, once per moment: a fleet's rows and spending are worked out as of
    one ``now`` (a local time zone looked up per agent was 3 % of a cold start)."""
    return local_day(moment)


def agent_cost(record: AgentRecord, now: datetime | None) -> Text:
    return cost_cell(spent(record, now))


def cost_words(cost: AgentCost) -> str:
    """The agent's spending in words (its detail window)."""
    words = f"{dollars(cost.usd)} so far, {dollars(cost.today_usd)} today"
    if cost.estimated:
        words += " (estimated from its transcript)"
    if cost.budget != "ok":
        words += f"; budget: {cost.budget}: {cost.detail}"
    return words


def optional_cells(record: AgentRecord, columns: tuple[str, ...]) -> tuple[object, ...]:
    """The cells of the optional columns asked for, in their order."""
    if record.error:
        return tuple(cell("") for _ in columns)
    cells: list[object] = []
    for column in columns:
        if column == "message":
            cells.append(Text(last_line(record.fields), "italic", no_wrap=True, end=""))
    return tuple(cells)


def row_values(
    record: AgentRecord,
    phase: str | None,
    observation: AgentObservation | None,
    settings: SupervisorSettings,
    now: datetime | None = None,
    extra: tuple[str, ...] = (),
) -> tuple[object, ...]:
    """The row's cells; the age at ``now`` (default: when the record was judged);
    ``extra``: the optional columns shown (``OPTIONAL_COLUMNS``)."""
    if extra:
        base = row_values(record, phase, observation, settings, now)
        return (*base, *optional_cells(record, extra))
    dot = cell("●", style=LIVENESS_STYLE[record.liveness])
    if record.error:
        return (
            dot,
            cell(""),
            Text(record.key),
            cell(""),
            cell("unreadable", style="bold red"),
            cell("-"),
            cell(""),
            cell(""),
            cell(""),
            cell(""),
            cell(""),
            cell(""),
            Text(f"unreadable: {record.error}", style="red"),
        )
    status = record.status
    view = agent_view(record.fields, observation)
    active = status == "active"
    if active:
        doing = view.activity or status
        shown = cell(doing, ACTIVITY_STYLE.get(doing, "default"))
    else:
        shown = cell(status, style=LIVENESS_STYLE[record.liveness])
    return (
        dot,
        wait_mark(view) if active else cell(""),
        cell(str(record.get("role") or "")),
        name_cell(record),  # unique to the row
        shown,
        cell(format_age(record.age_seconds if now is None else record.age_at(now))),
        cell(PHASE_LABELS.get(phase or "", phase or ""), "cyan"),
        context_meter(view.context_left_percent, settings) if active else cell(""),
        token_count(view),
        agent_cost(record, now),
        # Text, never str: a str cell is parsed as markup, so a node name written by another
        # tool as "node[red]x" would be drawn red and cut short.
        cell(str(record.get("node_id") or "")),
        cell(str(record.get("tmux_session") or "")),
        cell(str(record.get("predecessor_id") or "")),
    )
