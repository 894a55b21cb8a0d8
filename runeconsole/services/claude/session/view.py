"""What an agent is doing, as the console and ``agents --json`` show it.

Hook-fed values (written into the identity by ``runeconsole claude hook``) come first;
for an agent without hooks the monitor's last reading of its pane stands in (busy,
waiting at a prompt, compacting, the context figure on its status line). One home for
that precedence: the Agents and Problems panes and the CLI all ask here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from runeconsole.services.claude.session.activity import (
    ACTIVITIES,
    BUSY,
    COMPACTING,
    ENDED,
    IDLE,
    WAITING,
)
from runeconsole.services.pane_observation import RUNNING, AgentObservation
from runeconsole.services.pane_patterns import PaneReading

ACTIVE = "active"
PERMISSION_WORDS = ("permission", "approve", "allow")


class AgentView:
    __slots__ = ("activity", "context_left_percent", "from_hooks", "tokens", "waiting_for")

    def __init__(
        self,
        activity: str | None = None,
        waiting_for: str | None = None,
        context_left_percent: int | None = None,
        tokens: dict[str, int] | None = None,
        from_hooks: bool = False,
    ) -> None:
        self.activity = activity
        self.waiting_for = waiting_for
        self.context_left_percent = context_left_percent
        self.tokens = tokens
        self.from_hooks = from_hooks

    @property
    def waiting(self) -> bool:
        return self.activity == WAITING

    @property
    def compacting(self) -> bool:
        return self.activity == COMPACTING

    @property
    def wants_permission(self) -> bool:
        text = (self.waiting_for or "").lower()
        return self.waiting and any(word in text for word in PERMISSION_WORDS)

    @property
    def total_tokens(self) -> int | None:
        return None if self.tokens is None else sum(self.tokens.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "activity": self.activity,
            "waiting_for": self.waiting_for,
            "context_left_percent": self.context_left_percent,
            "tokens": self.tokens,
        }


def _percent(value: object) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 100:
        return int(value)
    return None


def _tokens(value: object) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    counts: dict[str, int] = {}
    for name in ("input", "output", "cache_read", "cache_creation"):
        count = value.get(name)
        if not isinstance(count, int) or isinstance(count, bool):
            return None
        counts[name] = count
    return counts


def agent_view(fields: dict[str, Any], observation: AgentObservation | None) -> AgentView:
    """The agent's activity from its identity's hook-fed fields, else from ``observation``
    (ignored unless it was taken of this very identity)."""
    if observation is not None and observation.agent_id != fields.get("agent_id"):
        observation = None
    screen = (
        observation.screen if observation is not None and observation.state == RUNNING else None
    )
    activity = fields.get("activity")
    waiting = fields.get("waiting_for")
    view = AgentView(
        context_left_percent=_percent(fields.get("context_left_percent")),
        tokens=_tokens(fields.get("tokens")),
    )
    if fields.get("status") != ACTIVE:  # stopped, however its last event left it
        view.activity = ENDED if fields.get("status") else None
        view.from_hooks = activity in ACTIVITIES
    elif activity in ACTIVITIES:
        view.activity, view.from_hooks = activity, True
        view.waiting_for = waiting if isinstance(waiting, str) and activity == WAITING else None
    elif screen is not None:
        if screen.compacting:
            view.activity = COMPACTING
        elif screen.waiting_for_input:
            view.activity = WAITING
            view.waiting_for = f"{screen.waiting_for_input}: {screen.prompt or ''}".strip(": ")
        else:
            view.activity = BUSY if screen.busy else IDLE
    if view.context_left_percent is None and screen is not None:
        view.context_left_percent = _percent(screen.context_left)
    return view


def overlay(reading: PaneReading, fields: dict[str, Any]) -> PaneReading:
    """A pane reading with what the hooks said put first: their context figure and their
    compaction, so the monitor's warnings and handoffs follow the exact numbers."""
    view = agent_view(fields, None)
    if not view.from_hooks:
        return reading
    context = view.context_left_percent
    return replace(
        reading,
        context_left=reading.context_left if context is None else context,
        compacting=reading.compacting or view.compacting,
    )
