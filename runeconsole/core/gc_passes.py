"""The garbage collector's full passes: paused while a whole fleet is read, what is alive
after a fill left out of them, and what a console open for months does about the passes
it skips.

Reading 100,000 identity files makes several hundred thousand objects that all stay
alive; CPython's cyclic collector runs a full pass each time the surviving objects grow
by a quarter, and each pass walks every live object again (``agents --json`` over
100,000 files: 2.9 s with the passes, 1.9 s without). Records hold no reference cycles,
so nothing is lost by pausing the collector while they are read: reference counting
frees them as before.

A console also leaves what is alive after a fill of its fleet out of every later pass
(``freeze_alive``: ``gc.freeze``). Two things then pile up in a console open for days, both
measured in the soak (``benchmarks/soak.py``): cyclic garbage (a toast taken down, a
window closed: widgets point at their parents) waits for a full pass that, with the fleet
frozen, comes only after tens of thousands of new survivors; and what was alive at a
freeze and died later (a toast up at that moment) is never collected. ``collect`` is
the console's remedy, run now and then (``tui/support/heap_upkeep.py``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0  # readers inside ``collector_paused`` now (threads may overlap)
_was_enabled = True  # the collector's state when the first of them came in


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside, back as it was when the last reader leaves."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()


def freeze_alive() -> None:
    """What is alive now is left out of the collector's full passes (``gc.freeze``): after
    a fill of the fleet (or a review's diff), so no pass walks its records and rows again.
    Each full pass walks every live object, 100-350 ms at 50,000 agents, and one landing
    on a key is that key's delay; the fleet's objects are freed by reference counting, not
    by those passes."""
    gc.freeze()


def collect(*, thaw: bool = False) -> int:
    """A full pass over what is not frozen: the cyclic garbage made since the last one.
    ``thaw``: over the frozen too (what died since it was frozen), frozen again after;
    each frozen object walked once (100-350 ms at 50,000 agents). The objects freed."""
    if thaw:
        gc.unfreeze()
    try:
        return gc.collect()
    finally:
        if thaw:
            gc.freeze()
