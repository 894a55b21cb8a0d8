"""Spending budgets: ``runeconsole.budgets`` in talisman.yml.

```yaml
runeconsole:
  budgets:
    per_agent_usd: 50     # an agent's spending so far
    per_day_usd: 20       # an agent's spending today (local time)
    fleet_day_usd: 200    # every agent's spending today
```

``judge`` says where an agent stands (ok, past 80 %, held at 100 %, allowed by the
operator); ``hold`` is what the PreToolUse hook does for a held agent (every tool call
denied, with the reason naming the budget) and what lifts it (``budget allow``). Both run
on the hook's fast path: no YAML, no Textual.
"""
