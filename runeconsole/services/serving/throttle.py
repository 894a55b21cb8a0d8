"""Wrong guesses are answered slowly: after a few free failures, each attempt from the
same address waits its turn, and the turns grow further apart with every failure.

The wait comes before the credentials are looked at, so guessing in parallel gains
nothing: an address in penalty is answered one attempt per interval, whatever it sends.
A success clears the address; a quiet spell forgives it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from time import monotonic

FREE_FAILURES = 5
FIRST_INTERVAL = 0.25
MAX_INTERVAL = 8.0
FORGIVE_AFTER = 300.0
MAX_ADDRESSES = 4096


@dataclass
class _Record:
    failures: int = 0
    last_failure: float = 0.0
    next_turn: float = 0.0


class FailureThrottle:
    def __init__(self, clock: Callable[[], float] = monotonic) -> None:
        self.clock = clock
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()

    def interval(self, failures: int) -> float:
        """The spacing of attempts after ``failures`` failures (0: not throttled)."""
        over = failures - FREE_FAILURES
        return 0.0 if over < 0 else min(MAX_INTERVAL, FIRST_INTERVAL * 2**over)

    def wait_for_turn(self, address: str) -> float:
        """Seconds this attempt must wait before it is looked at (its turn is reserved)."""
        now = self.clock()
        with self._lock:
            record = self._records.get(address)
            if record is None:
                return 0.0
            if now - record.last_failure > FORGIVE_AFTER:
                del self._records[address]
                return 0.0
            spacing = self.interval(record.failures)
            if not spacing:
                return 0.0
            turn = max(now, record.next_turn)
            record.next_turn = turn + spacing
            return turn - now

    def failed(self, address: str) -> None:
        now = self.clock()
        with self._lock:
            record = self._records.get(address)
            if record is None:
                if len(self._records) >= MAX_ADDRESSES:
                    self._forget_oldest()
                record = self._records[address] = _Record()
            record.failures += 1
            record.last_failure = now

    def passed(self, address: str) -> None:
        with self._lock:
            self._records.pop(address, None)

    def failures(self, address: str) -> int:
        with self._lock:
            record = self._records.get(address)
            return record.failures if record else 0

    def _forget_oldest(self) -> None:
        oldest = min(self._records, key=lambda a: self._records[a].last_failure)
        del self._records[oldest]
