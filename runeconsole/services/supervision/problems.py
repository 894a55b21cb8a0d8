"""The problems view: agents needing attention, most urgent first."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from runeconsole.core.timeutil import format_age
from runeconsole.services.claude.session.activity import STOPPED
from runeconsole.services.claude.session.session_view import stop_of
from runeconsole.services.claude.session.view import AgentView, agent_view
from runeconsole.services.cost import budget_state
from runeconsole.services.cost.ledger import local_day
from runeconsole.services.fleet.problem import Judge, Problem
from runeconsole.services.pane_observation import AgentObservation
from runeconsole.services.pane_patterns import PaneReading
from runeconsole.services.registry import ACTIVE, CRASHED, RED, AgentRecord
from runeconsole.services.supervision.settings import (
    HIGH,
    MEDIUM,
    URGENCY_WORDS,
    SupervisorSettings,
)

SETUP_FAILED: Final = "setup_failed"  # identity metadata: a worktree's setup failed, never started
# Rank of a context problem by urgency: high beside stale agents (both about to be lost),
# medium and low after prompts waiting for an answer.
CONTEXT_RANK = {HIGH: 1, MEDIUM: 3}
LOW_CONTEXT_RANK = 4
BUDGET_RANK = {"held": 0, "warn": 3}


def find_problems(
    records: Iterable[AgentRecord],
    observations: dict[str, AgentObservation],
    settings: SupervisorSettings | None = None,
    *,
    now: Any = None,
) -> list[Problem]:
    """Crashed, stale, stopped (a turn ended on an API error), waiting and low-context
    agents; a screen counts only when it was seen of the identity now registered (not
    of a predecessor). Works on records already read, so the console derives it from its
    Agents pane without reading any file.

    Waiting comes from Claude Code's hooks when they report it, else from the screen; an
    agent no monitor watches has its hook-fed context judged by ``settings``' thresholds.
    ``now``: the moment a stale agent's silence is measured to (default: its last judging)."""
    problems: list[Problem] = []
    for record in records:
        if record.error:
            problems.append(Problem(record.key, "unreadable", 1, record.error))
            continue
        if record.status == CRASHED:
            reason = record.metadata.get("crashed_reason")
            kind = "setup" if record.metadata.get(SETUP_FAILED) else "crashed"
            problems.append(Problem(record.key, kind, 0, str(reason or "crashed")))
            continue
        if record.status != ACTIVE:
            continue
        if record.liveness == RED:
            age = format_age(record.age_seconds if now is None else record.age_at(now))
            problems.append(Problem(record.key, "stale", 1, f"no heartbeat for {age}"))
        obs = observations.get(record.key)
        if obs is not None and obs.agent_id != record.get("agent_id"):
            obs = None
        view = agent_view(record.fields, obs)
        if view.waiting:
            problems.append(Problem(record.key, "waiting", 2, view.waiting_for or "input"))
        stop = stop_of(record.fields) if view.activity == STOPPED else None
        if stop is not None:  # its turn ended on an API error: it waits for the operator
            problems.append(Problem(record.key, STOPPED, 1, stop.problem))
        problems.extend(_budget(record, now))
        if obs is None:
            problems.extend(_hook_fed_context(record.key, view, settings))
            continue
        screen = obs.screen
        if obs.urgency:
            problems.append(
                _context(record.key, obs.urgency, screen.context_left, screen.compacting)
            )
    return sorted(problems, key=lambda problem: problem.sort_key)


def _budget(record: AgentRecord, now: Any) -> list[Problem]:
    """Held by a budget (beside the crashed: it does nothing until the operator acts), or
    past 80 % of one (after the waiting)."""

    cost = record.get("cost")
    when = now if now is not None else record.seen
    state = budget_state(cost, local_day(when)) if when is not None else "ok"
    if state not in BUDGET_RANK:
        return []
    detail = str(cost["budget"].get("detail") or "")
    shown = f"held: {detail}" if state == "held" else detail
    return [Problem(record.key, "budget", BUDGET_RANK[state], shown)]


def _hook_fed_context(
    key: str, view: AgentView, settings: SupervisorSettings | None
) -> list[Problem]:
    if settings is None or not view.from_hooks:
        return []
    reading = PaneReading(context_left=view.context_left_percent, compacting=view.compacting)
    urgency = settings.urgency(reading)
    if urgency is None:
        return []
    return [_context(key, urgency, view.context_left_percent, view.compacting)]


def _context(key: str, urgency: str, left: int | None, compacting: bool) -> Problem:
    """Context running out, in the words of the warning: ``9% context left, time to hand
    off`` (what is left first, what to do about it after)."""
    said = "compacting" if compacting else f"{left}% context left"
    rank = CONTEXT_RANK.get(urgency, LOW_CONTEXT_RANK)
    words = URGENCY_WORDS.get(urgency, urgency)
    return Problem(key, "context", rank, f"{said}, {words}", 0 if compacting else left)


def judge_with(settings: SupervisorSettings | None) -> Judge:
    """The fleet model's judge (``services/fleet``): one agent's problems by these rules."""

    def judge(
        record: AgentRecord, observation: AgentObservation | None, now: datetime | None
    ) -> list[Problem]:
        seen = {record.key: observation} if observation is not None else {}
        return find_problems([record], seen, settings, now=now)

    return judge
