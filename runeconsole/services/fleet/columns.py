"""``runeconsole.agents.columns`` in talisman.yml: the Agents pane's optional columns.

```yaml
runeconsole:
  agents:
    columns: [message]   # the last line of each agent's last message (MessageDisplay)
```
"""

from __future__ import annotations

from dataclasses import dataclass

from runeconsole.core.config import Talisman

OPTIONAL = ("message",)


@dataclass(frozen=True)
class AgentColumns:
    shown: tuple[str, ...] = ()

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> AgentColumns:
        section = talisman.section("runeconsole", "agents")
        given = section.get("columns", [])
        section.warn_unread()
        if not isinstance(given, list) or not all(name in OPTIONAL for name in given):
            talisman.report(
                f"{section.where('columns')}: runeconsole.agents.columns is {given!r}; "
                f"allowed: a list of {', '.join(OPTIONAL)}"
            )
            return cls()
        return cls(tuple(dict.fromkeys(given)))
