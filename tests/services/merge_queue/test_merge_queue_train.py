"""The train's rules on their own: what is built on what, the window, bisection, retries,
what lands and what is built again, flaky runs."""

from __future__ import annotations

import itertools

from runeconsole.services.merge_queue.evidence import Evidence
from runeconsole.services.merge_queue.train import (
    FAIL,
    FORM,
    GREEN,
    LAND,
    PLANNED,
    RED,
    RETRY,
    SPLIT,
    TESTING,
    Batch,
    Train,
)


def train(parallel_runs: int = 2, flaky_retries: int = 1, *, failing: float = 0.1) -> Train:
    """A train whose queue has seen ``failing`` of 100 entries fail."""
    ids = itertools.count(10)
    evidence = Evidence(failed=round(failing * 100), done=100)
    return Train(
        parallel_runs=parallel_runs,
        flaky_retries=flaky_retries,
        new_id=lambda: f"b{next(ids)}",
        evidence=evidence,
    )


def build_and_start(t: Train, batch: Batch, tree: str | None = None) -> bool:
    """Build ``batch`` where the train says (tree: its entries, unless given) and start
    its run; False: red without a run."""
    on = t.base_for(batch)
    tip = f"tip-{batch.batch_id}"
    tested = t.built(batch, on, on.tip if on and on.tip else "main", tip, tree or tip)
    if tested:
        t.started(batch)
    return tested


def add(t: Train, *batches: Batch) -> None:
    for batch in batches:
        t.add(batch)


def split_red(t: Train, entries: list[str]) -> tuple[Batch, Batch, Batch]:
    """A batch of ``entries`` built, run red and split: (it, its first half, its second)."""
    whole = Batch("w", entries)
    add(t, whole)
    build_and_start(t, whole)
    t.finished(whole, False)
    (first, second), _ = t.split(whole)
    return whole, first, second


def test_the_window_grows_by_one_per_clean_landing_and_halves_per_failure() -> None:
    t = train(parallel_runs=4)
    assert t.window == 4 and t.batch_size(8) == 8
    first, second = Batch("a", ["1"]), Batch("b", ["2"])
    add(t, first, second)
    assert build_and_start(t, first)
    t.finished(first, False)
    assert t.decide() == (RETRY, first)
    t.retry(first)
    assert t.next_to_build() is first and first.retry_due
    t.started(first)
    t.finished(first, False)
    assert t.decide() == (FAIL, first)
    t.fail(first)
    assert t.window == 2 and t.batch_size(8) == 4  # half after a failure: smaller batches
    assert build_and_start(t, second)
    t.finished(second, True)
    assert t.decide() == (LAND, second)
    t.landed(second)
    assert t.window == 3  # one more after a clean landing
    assert Train(parallel_runs=2, flaky_retries=0, new_id=str, window=9).window == 2


def test_a_batch_likely_to_pass_carries_the_next_while_it_tests() -> None:
    t = train(failing=0.02)
    a, b, c = Batch("a", ["1", "2"]), Batch("b", ["3", "4"]), Batch("c", ["5"])
    add(t, a, b, c)
    assert t.next_to_build() is a and build_and_start(t, a)
    assert t.next_to_build() is b and build_and_start(t, b)
    assert (b.on, b.base) == ("a", "tip-a")  # tests what main will be once a lands
    assert t.next_to_build() is None and not t.room_for_more()  # both slots busy
    t.finished(b, True)
    assert t.decide() is None  # b passed, but lands after a
    t.finished(a, True)
    assert t.decide() == (LAND, a)
    assert t.landed(a) == [] and b.on is None and t.decide() == (LAND, b)


def test_a_batch_from_a_queue_that_often_fails_tests_beside_the_one_ahead_on_main() -> None:
    t = train(failing=0.2)
    a, b = Batch("a", [str(n) for n in range(8)]), Batch("b", [str(n) for n in range(8, 16)])
    add(t, a, b)
    build_and_start(t, a)
    build_and_start(t, b)
    assert b.on is None  # a is more likely to fail than not: b's run counts either way
    t.finished(a, False)
    t.finished(b, False)
    assert t.decide() == (SPLIT, a)


def test_a_half_under_test_carries_nothing_and_other_work_tests_beside_it() -> None:
    t = train(failing=0.02)
    red, other = Batch("r", ["1", "2", "3", "4"]), Batch("o", ["5", "6"])
    add(t, red)
    build_and_start(t, red)
    t.finished(red, False)
    (first, second), _ = t.split(red)
    assert t.next_to_build() is first and build_and_start(t, first)
    add(t, other)
    assert t.waits(second) and t.next_to_build() is other  # not the second half: it waits
    build_and_start(t, other)
    assert other.on is None  # a half is as likely to fail as not: beside it, on main


def test_the_second_half_waits_for_the_first_unless_a_slot_would_be_idle() -> None:
    t = train()
    red = Batch("r", ["1", "2"])
    add(t, red)
    build_and_start(t, red)
    t.finished(red, False)
    (first, second), _ = t.split(red)
    build_and_start(t, first)
    assert t.next_to_build() is None and t.wanted() == FORM  # a new batch, if any waits
    assert t.next_to_build(idle=True) is second  # if none: both halves at once


def test_any_batch_that_passed_on_main_lands_and_one_built_on_the_old_main_goes_again_first() -> (
    None
):
    t = train(failing=0.3)
    a, b, c = Batch("a", ["1", "2"]), Batch("b", ["3", "4"]), Batch("c", ["5", "6"])
    add(t, a, b, c)
    build_and_start(t, a)
    build_and_start(t, b)
    assert b.on is None
    t.finished(b, True)
    assert t.decide() == (LAND, b)  # behind a, but on main as it is: it lands first
    assert t.landed(b) == []  # a still tests, on the old main: it runs on
    assert t.stale(a) and not t.carries(a)
    sent_back = t.finished(a, True)  # green, on a main that moved: built again
    assert sent_back == [a] and a.state == PLANNED and a.passed_before
    assert t.batches[0] is a and t.chance(a) > t.chance(c)  # first, and others on it
    build_and_start(t, a)
    build_and_start(t, c)
    assert c.on == "a"


def test_a_run_on_the_old_main_that_fails_is_red_on_the_new_one_without_another_run() -> None:
    t = train(failing=0.3)
    a, b = Batch("a", ["1"]), Batch("b", ["2", "3"])
    add(t, a, b)
    build_and_start(t, a)
    build_and_start(t, b)
    t.finished(a, True)
    t.landed(a)
    t.finished(b, False)
    assert t.decide() == (SPLIT, b)


def test_the_second_half_of_a_red_batch_whose_first_half_landed_is_red_without_a_build() -> None:
    t = train(parallel_runs=1)
    _, first, second = split_red(t, ["1", "2", "3", "4"])
    build_and_start(t, first)
    t.finished(first, True)
    t.landed(first)
    assert t.next_to_build() is second
    assert t.red_unbuilt(second)  # it holds all that the whole failed for
    assert (second.state, second.known_red, second.tip, t.decide()) == (
        RED,
        True,
        None,
        (SPLIT, second),
    )


def test_a_single_holding_all_a_red_run_failed_for_has_failed_alone_once() -> None:
    t = train()
    pair, after = Batch("p", ["3", "4"]), Batch("n", ["5"])
    add(t, pair)
    build_and_start(t, pair)
    t.finished(pair, False)
    (three, four), _ = t.split(pair)
    add(t, after)
    build_and_start(t, three)
    t.finished(three, True)
    t.landed(three)
    assert build_and_start(t, four) is False  # all that 3+4 failed for is 4
    assert (four.runs, four.left_out, four.known_red) == (1, True, True)
    assert t.next_to_build() is after and t.base_for(after) is None  # not on 4
    build_and_start(t, after)
    assert t.decide() == (RETRY, four)  # its one real run, beside the next batch
    t.retry(four)
    assert t.next_to_build() is four
    t.started(four)
    t.finished(four, False)
    assert t.decide() == (FAIL, four)
    assert t.fail(four) == [] and t.evidence.failed == 11


def test_a_single_that_passes_its_retry_lands_marked_flaky() -> None:
    t = train()
    flaky = Batch("f", ["9"])
    add(t, flaky)
    build_and_start(t, flaky)
    t.finished(flaky, False)
    assert flaky.left_out and t.decide() == (RETRY, flaky)
    t.retry(flaky)
    t.started(flaky)
    t.finished(flaky, True)
    assert t.decide() == (LAND, flaky) and flaky.flaky
    t.landed(flaky)
    assert t.window == 2  # not a clean landing: no more slots, none fewer


def test_a_red_batch_whose_entries_all_land_in_the_end_flaked() -> None:
    t = train(parallel_runs=1)
    whole = Batch("w", ["1", "2", "3", "4"])
    add(t, whole)
    build_and_start(t, whole, "tree-1234")
    t.finished(whole, False)  # a flaky test: nothing in it is broken
    (first, second), _ = t.split(whole)
    build_and_start(t, first, "tree-12")
    t.finished(first, True)
    t.landed(first)
    assert t.red_unbuilt(second)  # it holds all the red run held that is not in main
    (three, four), _ = t.split(second)
    build_and_start(t, three, "tree-123")
    t.finished(three, True)
    t.landed(three)
    assert build_and_start(t, four, "tree-1234") is False  # the very tree that failed
    t.retry(four)
    t.started(four)
    t.finished(four, True)  # passes: the red run flaked
    assert not four.flaky  # it never failed a run of its own
    t.landed(four)
    assert t.evidence.flaked == [["1", "2", "3", "4"]]


def test_a_first_half_that_fails_sends_its_second_half_first() -> None:
    t = train(parallel_runs=1)
    _, first, second = split_red(t, [str(n) for n in range(8)])
    build_and_start(t, first)
    t.finished(first, False)
    halves, _ = t.split(first)
    assert t.batches == [second, *halves]
    assert t.chance(second) > t.chance(halves[0]) and t.next_to_build() is second


def test_only_a_single_built_on_main_fails_and_a_timeout_is_not_run_again() -> None:
    t = train(failing=0.0)
    a, b = Batch("a", ["1"]), Batch("b", ["2"])
    add(t, a, b)
    build_and_start(t, a)
    build_and_start(t, b)
    assert b.on == "a"
    t.finished(b, False, retryable=False)  # b timed out on a, which still tests
    assert b.state == RED and t.decide() is None
    assert a.state == TESTING
    t.finished(a, True)
    assert t.decide() == (LAND, a)
    t.landed(a)
    assert t.decide() == (FAIL, b)


def test_a_new_batch_is_formed_only_when_a_slot_is_free_and_nothing_else_waits() -> None:
    t = train()
    assert t.wanted() == FORM
    a = Batch("a", ["1"])
    add(t, a)
    assert t.wanted() is a
    build_and_start(t, a)
    assert t.wanted() == FORM
    t.finished(a, True)
    assert a.state == GREEN and t.wanted() == FORM


def test_main_moved_by_another_hand_sends_every_green_batch_on_it_back_not_only_the_pushed() -> (
    None
):
    t = train(failing=0.2)  # batches test beside each other on main
    a, b = Batch("a", [str(n) for n in range(8)]), Batch("b", [str(n) for n in range(8, 16)])
    add(t, a, b)
    for batch in (a, b):
        build_and_start(t, batch)
    assert b.on is None
    t.finished(a, True)
    t.finished(b, True)
    assert t.decide() == (LAND, a)

    sent_back = t.moved()  # a's push was refused: a teammate pushed

    assert set(sent_back) == {a, b}  # b would lose the same race: built again too
    assert a.state == b.state == PLANNED and a.passed_before and b.passed_before
    assert t.decide() is None
