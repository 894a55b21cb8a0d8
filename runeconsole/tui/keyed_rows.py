"""A table's rows by key, in display order: what ``KeyedTable`` draws, with no drawing.

Rows are found by key (a dict) and by place (a list); a dropped row leaves a hole in the
list that is closed, with every place after it, only when a place is next asked for. A
burst that drops hundreds of rows of a 50,000-row table then walks the list once, where
closing each hole as it came would walk it once per row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import Any

Row = tuple[Any, ...]


class KeyedRows:
    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self.values: dict[str, Row] = {}
        self._order: list[str] = []  # may still list dropped keys (holes)
        self._place: dict[str, int] = {}  # valid while there is no hole
        self._holes = 0

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, key: object) -> bool:
        return key in self.values

    @property
    def settled(self) -> bool:
        """Every place is known without closing holes first."""
        return not self._holes

    def add(self, key: str, values: Row) -> int:
        """A new row, last; its place."""
        if key in self._place:  # dropped and back before its hole was closed
            self._close_holes()
        place = len(self._order)
        self._order.append(key)
        self._place[key] = place
        self.values[key] = values
        return place

    def drop(self, key: str) -> bool:
        if self.values.pop(key, None) is None:
            return False
        self._holes += 1
        return True

    def replace(self, rows: Iterable[tuple[str, Sequence[Any]]]) -> None:
        self.values = {key: tuple(values) for key, values in rows}
        self._order = list(self.values)
        self._place = {key: place for place, key in enumerate(self._order)}
        self._holes = 0

    def keys(self) -> list[str]:
        """Every key, in display order."""
        self._close_holes()
        return self._order

    def place(self, key: str) -> int | None:
        if key not in self.values:
            return None
        self._close_holes()
        return self._place[key]

    def key_at(self, place: int) -> str | None:
        self._close_holes()
        return self._order[place] if 0 <= place < len(self._order) else None

    def sort(self, *columns: str, key: Callable[[Any], Any] | None = None) -> None:
        """By the values of ``columns`` (one: the value; several: a tuple; none: the whole
        row), through ``key`` when given; a stable sort, as DataTable's."""
        self._close_holes()
        places = [self.columns.index(column) for column in columns]
        pick: Callable[[Row], Any] = itemgetter(*places) if places else tuple
        values = self.values
        by = pick if key is None else (lambda row: key(pick(row)))
        order = sorted(self._order, key=lambda k: by(values[k]))
        self._order = order
        self._place = {k: place for place, k in enumerate(order)}

    def _close_holes(self) -> None:
        if not self._holes:
            return
        values = self.values
        self._order = [key for key in self._order if key in values]
        self._place = {key: place for place, key in enumerate(self._order)}
        self._holes = 0
