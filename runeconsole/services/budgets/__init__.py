"""Spending budgets: ``runeconsole.budgets`` in talisman.yml.

```yaml
runeconsole:
  budgets:
    per_agent_usd: 50     # an agent's spending so far
    per_day_usd: 20       # an agent's spending today (local time)
    fleet_day_usd: 200    # every agent's spending today
```

``judge`` says where an agent stands (ok, past 80 %, held at 100 %, allowed by the
operator); ``booking`` books a session's total in the ledger and judges it (the identity's
``cost``); ``hold`` is what the PreToolUse hook does for a held agent (every tool call
denied, with the reason naming the budget) and what lifts it (``budget allow``). The
three run on the hook's fast path: no YAML, no Textual. ``standing`` judges every ledger
of a root for ``runeconsole cost``.

The budgets stand on ``services/cost`` (what was spent) and below ``services/claude``
(whose meter books and whose hook holds, handing down who tells the operator).
"""
