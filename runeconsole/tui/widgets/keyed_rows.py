"""A table's rows by key, in display order: what ``KeyedTable`` draws, with no drawing.

Rows are found by key (a dict) and by place (a list); a dropped row leaves a hole in the
list that is closed, with every place after the first hole, only when a place is next
asked for. A burst that drops hundreds of rows of a 50,000-row table then walks the list
once, where closing each hole as it came would walk it once per row.
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
        self._place: dict[str, int] = {}  # each key's place in _order, holes and all
        self._first_hole: int | None = None

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, key: object) -> bool:
        return key in self.values

    @property
    def settled(self) -> bool:
        """Every place is known without closing holes first."""
        return self._first_hole is None

    def add(self, key: str, values: Row) -> int:
        """A new row, last; its place."""
        if key in self._place:  # dropped and back before its hole was closed
            self._close_holes()
        place = len(self._order)
        self._order.append(key)
        self._place[key] = place
        self.values[key] = values
        return place

    def extend(self, rows: Sequence[tuple[str, Row]]) -> int:
        """New rows, last, in order; the place of the first."""
        keys = [key for key, _ in rows]
        if not self.values.keys().isdisjoint(keys) or len(set(keys)) != len(keys):
            raise ValueError("a row is shown already")
        if not self._place.keys().isdisjoint(keys):  # dropped and back, holes still open
            self._close_holes()
        first = len(self._order)
        self._order += keys
        self._place.update(zip(keys, range(first, first + len(keys)), strict=True))
        self.values.update(rows)
        return first

    def drop(self, key: str) -> int | None:
        """Drop the row; its place until then (before any other hole: exact), or None when
        there was no such row."""
        if self.values.pop(key, None) is None:
            return None
        place = self._place[key]
        if self._first_hole is None or place < self._first_hole:
            self._first_hole = place
        return place

    def replace(self, rows: Iterable[tuple[str, Sequence[Any]]]) -> None:
        self.values = {key: tuple(values) for key, values in rows}
        self._order = list(self.values)
        self._place = {key: place for place, key in enumerate(self._order)}
        self._first_hole = None

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

    def sort_by(self, place: Callable[[str], Any]) -> None:
        """By ``place(key)``; a stable sort."""
        self._close_holes()
        self._order = sorted(self._order, key=place)
        self._place = {k: at for at, k in enumerate(self._order)}

    def _close_holes(self) -> None:
        first = self._first_hole
        if first is None:
            return
        values, place = self.values, self._place
        for key in self._order[first:]:
            if key not in values:
                del place[key]
        self._order[first:] = [key for key in self._order[first:] if key in values]
        for index in range(first, len(self._order)):
            place[self._order[index]] = index
        self._first_hole = None
