"""The train's rules on their own: the window, bisection, retries, what is sent back."""

from __future__ import annotations

import itertools

from runeconsole.services.merge_queue.train import (
    FAIL,
    LAND,
    PLANNED,
    RED,
    RETRY,
    SPLIT,
    TESTING,
    Batch,
    Train,
)


def train(parallel_runs: int = 2, flaky_retries: int = 1) -> Train:
    ids = itertools.count(10)
    return Train(
        parallel_runs=parallel_runs, flaky_retries=flaky_retries, new_id=lambda: f"b{next(ids)}"
    )


def build_and_start(t: Train, batch: Batch, tree: str) -> bool:
    ahead = t.ahead_of(batch)
    tested = t.built(batch, ahead.tip if ahead else "main", f"tip-{batch.batch_id}", tree)
    if tested:
        t.started(batch)
    return tested


def test_the_window_grows_by_one_per_clean_landing_and_halves_per_failure() -> None:
    t = train(parallel_runs=4)
    assert t.window == 4
    for n in range(3):
        t.add(Batch(f"s{n}", [f"x{n}"]))
    first = t.next_to_build()
    assert first is not None and build_and_start(t, first, "t0")
    t.finished(first, False)
    assert t.decide() == (RETRY, first)
    t.retry(first)
    build_again = t.next_to_build()
    assert build_again is first and first.retry_due
    t.started(first)
    t.finished(first, False)
    assert t.decide() == (FAIL, first)
    t.fail(first)
    assert t.window == 2  # half after a failure
    second = t.next_to_build()
    assert second is not None and build_and_start(t, second, "t1")
    t.finished(second, True)
    assert t.decide() == (LAND, second)
    t.landed(second)
    assert t.window == 3  # one more after a clean landing
    assert Train(parallel_runs=2, flaky_retries=0, new_id=str, window=9).window == 2


def test_the_next_batch_is_built_on_the_tip_of_the_one_ahead_while_it_tests() -> None:
    t = train()
    a, b, c = Batch("a", ["1"]), Batch("b", ["2"]), Batch("c", ["3"])
    for batch in (a, b, c):
        t.add(batch)
    assert t.next_to_build() is a and build_and_start(t, a, "ta")
    assert t.next_to_build() is b and build_and_start(t, b, "tb")
    assert b.on == "a" and b.base == "tip-a"
    assert t.next_to_build() is None  # the window (2) is full
    assert not t.room_for_more()


def test_a_red_batch_is_split_even_behind_the_front_and_what_is_on_it_goes_back() -> None:
    t = train()
    a, b, c = Batch("a", ["1", "2"]), Batch("b", ["3", "4", "5", "6"]), Batch("c", ["7"])
    for batch in (a, b, c):
        t.add(batch)
    build_and_start(t, a, "ta")
    build_and_start(t, b, "tb")
    c_sent_back = t.finished(b, False)  # c was not built yet: nothing to stop
    assert c_sent_back == []
    assert t.decide() == (SPLIT, b)
    halves, _ = t.split(b)
    assert [h.entries for h in halves] == [["3", "4"], ["5", "6"]]
    assert [x.batch_id for x in t.batches] == ["a", "b10", "b11", "c"]
    assert all(h.half_of == "b" for h in halves) and t.window == 2  # a split is no failure


def test_the_second_half_of_a_red_batch_whose_first_half_landed_is_red_without_a_run() -> None:
    t = train(parallel_runs=1)
    whole = Batch("w", ["1", "2", "3", "4"])
    t.add(whole)
    build_and_start(t, whole, "main+1234")
    t.finished(whole, False)
    (first, second), _ = t.split(whole)
    build_and_start(t, first, "main+12")
    t.finished(first, True)
    t.landed(first)
    assert build_and_start(t, second, "main+1234") is False  # the tree that failed
    assert (second.state, second.known_red, t.decide()) == (RED, True, (SPLIT, second))


def test_a_single_whose_tree_failed_has_failed_alone_and_what_is_behind_goes_without_it() -> None:
    t = train()
    pair = Batch("p", ["3", "4"])
    t.add(pair)
    build_and_start(t, pair, "main+34")
    t.finished(pair, False)
    (three, four), _ = t.split(pair)
    after = Batch("n", ["5"])
    t.add(after)
    build_and_start(t, three, "main+3")
    t.finished(three, True)
    t.landed(three)
    assert build_and_start(t, four, "main+34") is False  # 4 alone on main+3: failed
    assert (four.runs, four.left_out) == (1, True)
    nxt = t.next_to_build()
    assert nxt is after and t.ahead_of(after) is None  # built on main, without 4
    build_and_start(t, after, "main+3+5")
    assert t.decide() == (RETRY, four)  # its one run again, beside the next batch
    t.retry(four)
    assert t.next_to_build() is four
    t.started(four)
    t.finished(four, False)
    t.finished(after, True)
    assert t.decide() == (FAIL, four)
    assert t.fail(four) == []  # what is behind stands: it was built without it
    assert t.decide() == (LAND, after)


def test_a_single_that_passes_its_retry_takes_back_what_was_built_without_it() -> None:
    t = train()
    flaky, after = Batch("f", ["9"]), Batch("n", ["10"])
    t.add(flaky)
    t.add(after)
    build_and_start(t, flaky, "main+9")
    assert t.finished(flaky, False) == []
    assert flaky.left_out
    build_and_start(t, after, "main+10")
    t.retry(flaky)
    assert t.next_to_build() is flaky
    t.started(flaky)
    sent_back = t.finished(flaky, True)
    assert sent_back == [after] and after.state == PLANNED  # built again on it
    assert t.decide() == (LAND, flaky) and flaky.runs == 2
    t.landed(flaky)
    assert t.window == 2  # not a clean landing: no more slots, none fewer


def test_only_the_front_fails_and_a_timeout_is_not_run_again() -> None:
    t = train()
    a, b = Batch("a", ["1"]), Batch("b", ["2"])
    t.add(a)
    t.add(b)
    build_and_start(t, a, "t1")
    build_and_start(t, b, "t2")
    t.finished(b, False, retryable=False)  # b timed out, a still tests
    assert b.state == RED and t.decide() is None
    assert a.state == TESTING
    t.finished(a, True)
    assert t.decide() == (LAND, a)
    t.landed(a)
    assert t.decide() == (FAIL, b)
