"""What the monitor saw of one agent's pane on its last pass: a leaf every floor above the
pane patterns reads (the fleet model, Claude Code's view of an agent, the monitor)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from runeconsole.services.pane_patterns import PaneReading

RUNNING, EXITED, GONE = "running", "exited", "gone"


@dataclass
class AgentObservation:
    """What the monitor saw of one agent on its last pass (a row of the Agents pane)."""

    key: str
    agent_id: str | None
    tmux_session: str | None
    state: str
    observed_at: str
    pid: int | None = None
    exit_status: int | None = None
    screen: PaneReading = field(default_factory=PaneReading)
    urgency: str | None = None

    def to_json(self) -> dict[str, Any]:
        # Field by field: every value is a scalar, and ``dataclasses.asdict`` deep-copies
        # each through its recursion, 25 times slower; the monitor's pass saves every agent
        # (10,000: 380 ms, on a thread beside the console's first paint).
        data = {name: getattr(self, name) for name in _FIELDS}
        data["screen"] = {name: getattr(self.screen, name) for name in _SCREEN_FIELDS}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentObservation:
        """As ``to_json`` wrote it (the saved pass, another source's stream); a field of
        another shape reads as missing."""

        def text(name: str) -> str | None:
            value = data.get(name)
            return value if isinstance(value, str) else None

        def number(name: str) -> int | None:
            value = data.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        screen = data.get("screen")
        screen = screen if isinstance(screen, dict) else {}
        reading = PaneReading(
            **{n: screen[n] for n in PaneReading.__dataclass_fields__ if n in screen}
        )
        return cls(
            text("key") or "",
            text("agent_id"),
            text("tmux_session"),
            text("state") or GONE,
            text("observed_at") or "",
            number("pid"),
            number("exit_status"),
            reading,
            text("urgency"),
        )


_FIELDS = tuple(f.name for f in fields(AgentObservation))
_SCREEN_FIELDS = tuple(f.name for f in fields(PaneReading))
