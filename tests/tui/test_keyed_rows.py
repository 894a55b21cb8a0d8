"""KeyedRows keeps every row's place right through any run of adds, drops and sorts, though
it closes a dropped row's hole only when a place is next asked for."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from runeconsole.tui.widgets.keyed_rows import KeyedRows

KEYS = st.sampled_from([f"k{n}" for n in range(12)])
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), KEYS, st.integers(0, 9)),
        st.tuples(st.just("drop"), KEYS, st.just(0)),
        st.tuples(st.just("place"), KEYS, st.just(0)),
        st.tuples(st.just("sort"), KEYS, st.just(0)),
    ),
    max_size=60,
)


@given(OPERATIONS)
def test_places_follow_a_plain_list_through_any_run_of_changes(
    operations: list[tuple[str, str, int]],
) -> None:
    rows = KeyedRows(["value", "key"])
    plain: list[tuple[str, tuple[int, str]]] = []  # what the table should show, in order
    for operation, key, value in operations:
        shown = [k for k, _ in plain]
        if operation == "add" and key not in shown:
            assert rows.add(key, (value, key)) >= len(shown)  # last (holes may still count)
            plain.append((key, (value, key)))
        elif operation == "drop":
            dropped = rows.drop(key)
            assert (dropped is not None) == (key in shown)
            plain = [(k, v) for k, v in plain if k != key]
        elif operation == "place":
            assert rows.place(key) == (shown.index(key) if key in shown else None)
        elif operation == "sort":
            rows.sort("value")
            plain.sort(key=lambda row: row[1][0])  # stable, as the table's
        assert len(rows) == len(plain) and (key in rows) == any(k == key for k, _ in plain)
    assert rows.keys() == [k for k, _ in plain]
    assert [rows.key_at(n) for n in range(len(plain) + 1)] == [*rows.keys(), None]


def test_a_row_dropped_and_added_back_before_the_hole_closes_is_listed_once_and_last() -> None:
    rows = KeyedRows(["value"])
    rows.replace([("a", (1,)), ("b", (2,)), ("c", (3,))])
    assert rows.drop("a") == 0 and not rows.settled
    rows.add("a", (4,))
    assert rows.keys() == ["b", "c", "a"] and rows.settled


def test_sorting_by_several_columns_or_a_key_function() -> None:
    rows = KeyedRows(["role", "name"])
    rows.replace([("1", ("worker", "b")), ("2", ("guard", "z")), ("3", ("worker", "a"))])
    rows.sort("role", "name")
    assert rows.keys() == ["2", "3", "1"]
    rows.sort("name", key=lambda name: -ord(name))
    assert rows.keys() == ["2", "1", "3"]
    rows.sort()  # the whole row
    assert rows.keys() == ["2", "3", "1"]
