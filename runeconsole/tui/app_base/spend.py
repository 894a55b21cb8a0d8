"""The fleet's spending and the plan's headroom, as both consoles' top lines show them:
``$2.25 today`` right after the agents' colours (it fits an 80-column pane), then
``$3.75 in all · 5h 42% ↻14:05 7d 17%`` at the end (``~``: partly estimated; the plan
coloured as it fills). Also the toasts when an agent crosses a budget."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import datetime

from rich.text import Text
from textual.message import Message
from textual.notifications import SeverityLevel

from runeconsole.services.budgets.judge import HELD, WARN
from runeconsole.services.cost.ledger import local_day
from runeconsole.services.cost.summary import AgentCost, plan_text
from runeconsole.services.cost.totals import Totals
from runeconsole.services.liveness import AgentRecord
from runeconsole.tui.cells.agent_cells import dollars, spent


def spend_text(totals: Totals, now: datetime, source: str | None = None) -> tuple[Text, Text]:
    """What was spent today (``~$41.52 today``), and the rest: so far and the plan's
    headroom (`` ~$71.52 in all · 5h 42% ↻14:05 7d 17%``); ``source``: one source's."""
    today, rest = Text(), Text()
    usd = totals.usd(source)
    if usd > 0:
        mark = "~" if totals.estimated(source) else ""
        today.append(f"{mark}{dollars(totals.today_usd(local_day(now), source))} today", "bold")
        rest.append(f"{mark}{dollars(usd)} in all", "dim")
    limits = totals.rate_limits(now) if source is None else None
    if limits:
        used = max(
            (w.get("used_percentage") or 0 for w in limits.values() if isinstance(w, dict)),
            default=0,
        )
        style = "bold red" if used >= 90 else "yellow" if used >= 80 else "cyan"
        rest.append(" · " if rest else "")
        rest.append(plan_text(limits, short=True), style)
    return today, rest


def budget_toast(cost: AgentCost) -> tuple[str, SeverityLevel] | None:
    """The toast for an agent whose budget state just worsened: (message, severity)."""
    if cost.budget == HELD:
        return f"{cost.key} is held: {cost.detail}. $ on the Agents pane lets it go on.", "error"
    if cost.budget == WARN:
        return f"{cost.key}: {cost.detail}", "warning"
    return None


RANK = {WARN: 1, HELD: 2}
CATCH_UP_CHUNK = 500  # agents taken in under the lock at a time (``catch_up``)


class SpendMoved(Message):
    """Agents' records changed (``None``: all of them; else those ``SpendWatch.moved``
    gathered since): the top line's spending and the budget toasts follow. Posted by the
    app to itself from any thread, once for any number of changes before it is handled."""

    def __init__(self, every: bool = False) -> None:
        super().__init__()
        self.every = every


class SpendWatch:
    """The fleet's totals and each agent's budget state, followed record by record.

    Followed on the UI thread as agents change, and, after a large fleet's first rows
    are painted, by a worker that takes in every agent (``catch_up``): one lock keeps
    the two apart, held a chunk of agents at a time."""

    def __init__(self) -> None:
        self.totals = Totals()
        self._states: dict[str, str] = {}
        self._moved: set[str] = set()  # changed since the last take (from any thread)
        self._lock = threading.Lock()
        self._following = threading.Lock()  # the totals and states: one follower at a time
        self._text: tuple[tuple[int, datetime], tuple[Text, Text]] | None = None

    def moved(self, keys: Iterable[str]) -> bool:
        """These agents changed; true when they are the first since the last ``take``
        (post one ``SpendMoved`` then: 170 heartbeats a second make one message each)."""
        with self._lock:
            first = not self._moved
            self._moved.update(keys)
            return first

    def take(self) -> set[str]:
        with self._lock:
            moved, self._moved = self._moved, set()
        return moved

    def text(self, now: datetime) -> tuple[Text, Text]:
        """The top line's spending (``spend_text``), read while no worker follows; worked
        out again only when the totals moved or the minute turned (the top line is asked
        for after every burst of heartbeats, which move neither)."""
        with self._following:
            moment = (self.totals.version, now.replace(second=0, microsecond=0))
            if self._text is None or self._text[0] != moment:
                self._text = (moment, spend_text(self.totals, now))
            return self._text[1]

    def follow(
        self, records: dict[str, AgentRecord | None], now: datetime, source: str = ""
    ) -> list[tuple[str, SeverityLevel]]:
        """Take in these agents (``None``: gone); the toasts for budgets just crossed (an
        agent seen for the first time is taken in silently: its row says it)."""
        with self._following:
            return self._follow(records, now, source)

    def catch_up(
        self, keys: Iterable[str], record: Callable[[str], AgentRecord | None], now: datetime
    ) -> list[tuple[str, SeverityLevel]]:
        """``follow`` every one of ``keys`` (a fleet just loaded: in a worker), as each
        record is when its chunk is taken in; the lock is held for a chunk at a time, so
        the UI thread's ``follow`` of an agent that changed waits no longer."""
        toasts, keys = [], list(keys)
        for at in range(0, len(keys), CATCH_UP_CHUNK):
            with self._following:
                chunk = {key: record(key) for key in keys[at : at + CATCH_UP_CHUNK]}
                toasts += self._follow(chunk, now, "")
        return toasts

    def _follow(
        self, records: dict[str, AgentRecord | None], now: datetime, source: str
    ) -> list[tuple[str, SeverityLevel]]:
        toasts = []
        for key, record in records.items():
            fields = record.fields if record is not None and not record.error else None
            self.totals.update(key, fields, source)
            cost = spent(record, now) if record is not None and fields is not None else None
            state = cost.budget if cost is not None else "ok"
            before = self._states.get(key)
            self._states[key] = state
            if fields is None:
                self._states.pop(key, None)
            elif before is not None and RANK.get(state, 0) > RANK.get(before, 0) and cost:
                toast = budget_toast(cost)
                if toast is not None:
                    toasts.append(toast)
        return toasts
