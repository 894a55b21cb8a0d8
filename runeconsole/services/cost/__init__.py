"""What the agents cost, in dollars: per agent, per role, per day and for the fleet.

``prices`` holds the per-model tables (dollars per million tokens, and context windows),
``ledger`` the per-agent ledgers under ``.claude/state/cost/`` (written by the status
line and, for a session without one, by the hook's estimate from its transcript),
``summary`` the figures the CLI and both consoles show. ``prices`` and ``ledger`` run
on the hook's fast path: they import nothing heavy (no YAML, no Textual, no dataclasses).
"""
