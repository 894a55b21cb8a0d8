"""The agent's meter: its context window and what it has cost, from the two things
Claude Code tells us: its transcript (read by every hook event) and its status line.

The status line says it best: the model, the window's size and how much of it is used
(``context_window``), the session's cost in dollars (``cost.total_cost_usd``) and, for a
subscription, the plan's rate limits. Without it the hook works them out: the context in
use over the window ``ClaudeSettings.window_for`` finds (the setting when set, else the
window the status line last reported for the model, else the model's), and an estimate of
the cost from the session's tokens at the model's price (``services/cost/prices.py``),
marked estimated, until a status line reports the real figure.

Fields written (beside the identity's others): ``context_left_percent``, ``cost``
(``services/budgets/booking.py``), ``rate_limits`` ({five_hour, seven_day} {used_percentage,
resets_at}, and ``reported_at``), and in ``claude``: ``model``, ``context_window``
({model, tokens}) and ``cost_session``.
"""

from __future__ import annotations

from runeconsole.core.timeutil import iso_z
from runeconsole.services.budgets import booking
from runeconsole.services.budgets.booking import Entry
from runeconsole.services.claude.bridge import settings as claude_settings
from runeconsole.services.cost import prices

__all__ = ["Entry", "StatusInput", "from_status_line", "from_transcript"]

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from runeconsole.adapters.transcript import Usage

WINDOWS = ("five_hour", "seven_day")


def context_left(tokens: int | None, window: int) -> int | None:
    """Percent of ``window`` left, rounded as Claude Code's status line rounds it (the used
    share to the nearest whole, halves up), so the hook and the status line agree."""
    if tokens is None or window <= 0:
        return None
    return 100 - max(0, min(100, int(tokens * 100 / window + 0.5)))


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return float(value) if abs(value) < 1e15 else None
    return None


def _count(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number >= 0 else None


def reported_window(claude: dict[str, Any]) -> int | None:
    """The window the status line reported, while the model is still the one it named."""
    window = claude.get("context_window")
    if isinstance(window, dict) and window.get("model") == claude.get("model"):
        return _count(window.get("tokens"))
    return None


def from_transcript(entry: Entry, usage: Usage, now: datetime) -> None:
    """A hook event read the transcript on: the context left, and the cost estimated while
    the session has no status line."""
    fields, claude = entry.fields, entry.claude
    found = claude_settings.load(entry.paths)
    model = claude.get("model") if isinstance(claude.get("model"), str) else None
    if usage.context_tokens is not None:
        window = found.window_for(model, reported_window(claude))
        fields["context_left_percent"] = context_left(usage.context_tokens, window)
    kept = claude.get("cost_session")
    real = (
        isinstance(kept, dict)
        and kept.get("id") == claude.get("session_id")
        and kept.get("estimated") is False
    )
    if not real and any(usage.tokens.values()):
        total = prices.estimate(usage.tokens, prices.price(model, found.prices))
        session = claude.get("session_id")
        booking.book(entry, session, total, True, now, found.budgets, claude_settings.notifier_for)


class StatusInput:
    """The JSON object Claude Code writes on its status line command's stdin, read
    defensively: a field of the wrong type reads as missing."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def _object(self, name: str) -> dict[str, Any]:
        value = self.data.get(name)
        return value if isinstance(value, dict) else {}

    @property
    def session_id(self) -> str | None:
        value = self.data.get("session_id")
        return value if isinstance(value, str) and value else None

    @property
    def cwd(self) -> str | None:
        value = self.data.get("cwd")
        return value if isinstance(value, str) and value else None

    @property
    def project_dir(self) -> str | None:
        value = self._object("workspace").get("project_dir")
        return value if isinstance(value, str) and value else None

    @property
    def model(self) -> str | None:
        value = self._object("model").get("id")
        return value if isinstance(value, str) and value else None

    @property
    def model_name(self) -> str | None:
        value = self._object("model").get("display_name")
        return value if isinstance(value, str) and value else self.model

    @property
    def cost_usd(self) -> float | None:
        value = _number(self._object("cost").get("total_cost_usd"))
        return value if value is not None and value >= 0 else None

    @property
    def window(self) -> int | None:
        size = _count(self._object("context_window").get("context_window_size"))
        return size if size else None

    @property
    def remaining_percent(self) -> int | None:
        value = _number(self._object("context_window").get("remaining_percentage"))
        return int(value) if value is not None and 0 <= value <= 100 else None

    @property
    def context_tokens(self) -> int | None:
        """Tokens of the context in use: the last request's input, cache read and written."""
        usage = self._object("context_window").get("current_usage")
        if not isinstance(usage, dict):
            return None
        names = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        counts = [_count(usage.get(name)) for name in names]
        return sum(c for c in counts if c is not None)

    @property
    def rate_limits(self) -> dict[str, dict[str, float | None]]:
        found: dict[str, dict[str, float | None]] = {}
        limits = self._object("rate_limits")
        for name in WINDOWS:
            window = limits.get(name)
            if not isinstance(window, dict):
                continue
            used, resets = _number(window.get("used_percentage")), _count(window.get("resets_at"))
            if used is not None and 0 <= used <= 100:
                found[name] = {"used_percentage": used, "resets_at": resets}
        return found


def from_status_line(entry: Entry, status: StatusInput, now: datetime) -> None:
    """What the status line says, put in the identity's fields."""
    fields, claude = entry.fields, entry.claude
    found = claude_settings.load(entry.paths)
    model = status.model
    if model:
        claude["model"] = model
    if status.window:
        claude["context_window"] = {"model": claude.get("model"), "tokens": status.window}
    tokens = status.context_tokens
    if found.context_window_tokens is not None and tokens is not None:
        fields["context_left_percent"] = context_left(tokens, found.context_window_tokens)
    elif status.remaining_percent is not None:
        fields["context_left_percent"] = status.remaining_percent
    elif tokens is not None and status.window:
        fields["context_left_percent"] = context_left(tokens, status.window)
    limits = status.rate_limits
    if limits:
        before = fields.get("rate_limits")
        before = (
            {k: v for k, v in before.items() if k in WINDOWS} if isinstance(before, dict) else {}
        )
        if before != limits or not isinstance(fields.get("rate_limits"), dict):
            fields["rate_limits"] = {**limits, "reported_at": iso_z(now)}
    total = status.cost_usd
    if total is not None:
        session = status.session_id
        booking.book(entry, session, total, False, now, found.budgets, claude_settings.notifier_for)
