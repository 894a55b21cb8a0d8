"""The console's heap upkeep: the collector's full pass now and then, never just after a
key, and now and then over what was frozen too (with the real collector)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from textual import events

from runeconsole.tui.support.heap_upkeep import QUIET_SECONDS, THAW_SECONDS, HeapUpkeep


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Node:
    """Half of a reference cycle: freed only by the collector's pass."""

    def __init__(self) -> None:
        self.other: Any = None


def cycle() -> weakref.ref[Node]:
    first, second = Node(), Node()
    first.other, second.other = second, first
    return weakref.ref(first)


@pytest.fixture
def collector() -> Iterator[None]:
    """The collector as the console runs it after a fill (nothing frozen before, nothing
    left frozen after)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()  # no pass of its own in the middle of a test
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def test_a_tick_collects_the_cyclic_garbage_made_since_the_last(collector: None) -> None:
    upkeep = HeapUpkeep(app=None, clock=Clock())  # type: ignore[arg-type]
    gone = cycle()
    assert gone() is not None
    upkeep.tick()
    assert gone() is None
    assert upkeep.passes == 1


def test_no_pass_runs_within_moments_of_a_key(collector: None) -> None:
    clock = Clock()
    upkeep = HeapUpkeep(app=None, clock=clock)  # type: ignore[arg-type]
    upkeep.saw(events.Key("j", "j"))
    gone = cycle()
    clock.now += QUIET_SECONDS / 2
    upkeep.tick()
    assert upkeep.passes == 0 and gone() is not None
    clock.now += QUIET_SECONDS
    upkeep.tick()
    assert upkeep.passes == 1 and gone() is None


def test_what_died_frozen_is_freed_by_the_thawing_pass_only(collector: None) -> None:
    clock = Clock()
    upkeep = HeapUpkeep(app=None, clock=clock)  # type: ignore[arg-type]
    first, second = Node(), Node()
    first.other, second.other = second, first
    gone = weakref.ref(first)
    gc.freeze()  # a fill settled while the cycle was alive
    del first, second
    upkeep.tick()
    assert gone() is not None, "an ordinary pass leaves the frozen alone"
    clock.now += THAW_SECONDS
    upkeep.tick()
    assert gone() is None
    assert upkeep.thawed == 1
    assert gc.get_freeze_count() > 0, "what is alive is frozen again"
