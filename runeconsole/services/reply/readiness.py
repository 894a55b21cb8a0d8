"""Whether an agent can take a message now, and if not why: ``say`` refuses an agent
that has ended, and one that waits on a permission or a question (typed text would land
in the dialog, and Enter would pick its highlighted option: answer that first).

Waiting is read from two places: the hooks (a permission request or a question relayed
to the console while its hook waits) and the screen (Claude Code's own dialog, or any
menu where Enter picks an option). A Notification alone (Claude Code saying it waits for
input) is no dialog: that is exactly when a message is welcome.
"""

from __future__ import annotations

from runeconsole.services.claude.bridge import payload as events
from runeconsole.services.claude.session.activity import ENDED
from runeconsole.services.claude.session.view import AgentView, agent_view
from runeconsole.services.pane_patterns import PaneReading
from runeconsole.services.registry import ACTIVE, AgentRecord


def has_ended(record: AgentRecord, view: AgentView) -> str | None:
    """Why the agent is over (``None``: it is not)."""
    if record.status != ACTIVE:
        metadata = record.metadata
        reason = metadata.get(f"{record.status}_reason")
        told = f": {reason}" if isinstance(reason, str) and reason else ""
        return f"{record.key} has ended ({record.status}{told})"
    if view.activity == ENDED:
        return f"{record.key} has ended (its session ended)"
    return None


def ended(record: AgentRecord) -> str | None:
    """Why the agent is over, from its record alone (``None``: it is not): what the
    consoles check before offering to message it or to go to its session."""
    return has_ended(record, agent_view(record.fields, None))


def _last_event(record: AgentRecord) -> object:
    claude = record.fields.get("claude")
    return claude.get("last_event") if isinstance(claude, dict) else None


def waits_on(record: AgentRecord, view: AgentView, reading: PaneReading) -> str | None:
    """What the agent waits on that must be answered before it is told anything."""
    if reading.menu or reading.waiting_for_input:
        kind = reading.waiting_for_input or "a choice"
        prompt = f" ({reading.prompt})" if reading.prompt else ""
        return f"{record.key} waits on {_article(kind)}{prompt} on its screen: answer that first"
    if view.waiting and _last_event(record) != events.NOTIFICATION:
        what = view.waiting_for or "input"
        kind = "a permission" if view.wants_permission else "a question"
        return f"{record.key} waits on {kind} ({what}): answer that first"
    return None


def _article(kind: str) -> str:
    return kind if kind.startswith("a ") else f"a {kind}"
