"""The agents listing's table: its columns and one agent's row, for ``agents`` and
``agents --fleet`` alike."""

from __future__ import annotations

from runeconsole.core.timeutil import format_age
from runeconsole.services.claude.session.session_view import activity_text
from runeconsole.services.claude.session.view import AgentView
from runeconsole.services.liveness import AgentRecord

COLUMNS = ("LIVENESS", "KEY", "STATUS", "ACTIVITY", "SEEN", "NODE", "TMUX", "PREDECESSOR")


def table_row(record: AgentRecord, view: AgentView | None = None) -> tuple[str, ...]:
    """The listing's row; without ``view`` (a row from another source's stream) what the
    agent is doing is the record's own ``activity``."""
    # The colour's name too: a pipe or a colour-blind reader does not see the dot's colour.
    if record.error:
        unreadable = f"unreadable: {record.error}"
        return (f"● {record.liveness}", record.key, unreadable, "", "-", "", "", "")
    return (
        f"● {record.liveness}",
        record.key,
        record.status,
        activity_text(view.activity if view else record.get("activity"), record.fields),
        format_age(record.age_seconds),
        str(record.get("node_id") or ""),
        str(record.get("tmux_session") or ""),
        str(record.get("predecessor_id") or ""),
    )
