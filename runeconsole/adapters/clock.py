"""Time, injected so liveness, countdowns and snapshots are testable."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to (tests, snapshots, screenshots)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 2, 26, 12, 0, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += timedelta(seconds=seconds)


def monotonic() -> float:
    return time.monotonic()
