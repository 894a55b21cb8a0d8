"""Counts kept as items change: each item sits in one bucket (a colour, "open") of one
group (a fleet's source), counting one (or its ``weight``: an agent's problems); moving or
dropping an item moves its count, so reading a count never walks the items, at any
fleet size."""

from __future__ import annotations

from collections import Counter, defaultdict

ALL = None  # counts(ALL): every group's together


class Tally:
    def __init__(self) -> None:
        self._place: dict[str, tuple[str, str, int]] = {}  # item -> (group, bucket, weight)
        self._groups: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._all: Counter[str] = Counter()

    def put(self, item: str, bucket: str | None, group: str = "", weight: int = 1) -> bool:
        """``item`` is in ``bucket`` of ``group`` now (``None``: in none); True when a count
        moved."""
        place = None if bucket is None or weight == 0 else (group, bucket, weight)
        old = self._place.get(item)
        if old == place:
            return False
        if old is not None:
            self._count(old, -1)
        if place is None:
            self._place.pop(item, None)
        else:
            self._place[item] = place
            self._count(place, 1)
        return True

    def drop(self, item: str) -> bool:
        return self.put(item, None)

    def count(self, bucket: str, group: str | None = ALL) -> int:
        return (self._all if group is ALL else self._groups.get(group, Counter()))[bucket]

    def counts(self, group: str | None = ALL) -> dict[str, int]:
        """Items by bucket, of one group or of all; buckets with none are left out."""
        found = self._all if group is ALL else self._groups.get(group, Counter())
        return {bucket: count for bucket, count in found.items() if count}

    def _count(self, place: tuple[str, str, int], sign: int) -> None:
        group, bucket, weight = place
        self._groups[group][bucket] += sign * weight
        self._all[bucket] += sign * weight
