"""An agent needing attention, as the fleet model keeps it: the model judges each agent's
problems once, when the agent changes (``FleetRecords``, through a ``Judge`` the console
hands it: the rules are the monitor's, ``services/supervision/problems.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from runeconsole.services.liveness import AgentRecord
from runeconsole.services.pane_observation import AgentObservation


@dataclass(frozen=True)
class Problem:
    """An agent needing attention; ``rank`` orders the problems view (0 = most urgent),
    and within a rank less context left comes first (``context_left``, 0 when compacting)."""

    key: str
    kind: str  # crashed | stale | stopped | waiting | context | budget
    rank: int
    detail: str
    context_left: int | None = None

    @property
    def sort_key(self) -> tuple[int, float, str]:
        left = self.context_left if self.context_left is not None else float("inf")
        return (self.rank, left, self.key)


# An agent's problems now: its record, the monitor's last reading of its pane, and the
# moment a stale agent's silence is measured to (``None``: when the record was judged).
Judge = Callable[[AgentRecord, AgentObservation | None, datetime | None], list[Problem]]
