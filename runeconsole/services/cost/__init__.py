"""What the agents cost, in dollars: per agent, per role, per day and for the fleet.

``prices`` holds the per-model tables (dollars per million tokens, and context windows),
``ledger`` the per-agent ledgers under ``.claude/state/cost/`` (written by the status
line and, for a session without one, by the hook's estimate from its transcript),
``summary`` the figures the CLI and both consoles show. ``prices`` and ``ledger`` run
on the hook's fast path: they import nothing heavy (no YAML, no Textual, no dataclasses).

The package is the floor of the spending: ``services/budgets`` judges what it recorded
(and books a session's total, ``budgets/booking.py``), ``services/claude`` feeds both.
Here are the words they share: the budget states the ``cost`` an identity carries may
hold, and that state read back (``budget_state``).
"""

from __future__ import annotations

OK, WARN, HELD, ALLOWED = "ok", "warn", "held", "allowed"
STATES = (OK, WARN, HELD, ALLOWED)


def budget_state(cost: object, day: str) -> str:
    """The budget state an identity's ``cost`` says for ``day`` (``ok`` when none, or
    when it was judged on another day)."""
    budget = cost.get("budget") if isinstance(cost, dict) else None
    if not isinstance(budget, dict) or budget.get("day") != day:
        return OK
    state = budget.get("state")
    return state if state in STATES else OK
