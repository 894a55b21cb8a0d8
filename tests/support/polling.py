"""The one way tests wait: poll a condition until it holds, with a generous deadline,
so a slow (loaded) machine makes a test slower, never red."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

from textual.pilot import Pilot

T = TypeVar("T")


def wait_until(
    probe: Callable[[], T], timeout: float = 30.0, every: float = 0.02, what: str = ""
) -> T:
    """Poll ``probe`` until it returns something truthy and return that; fail with its
    last value (or ``what``) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not value and time.monotonic() < deadline:
        time.sleep(every)
        value = probe()
    assert value, f"{what or 'condition'} still {value!r} after {timeout}s"
    return value


async def until(pilot: Pilot, condition: Callable[[], object], timeout: float = 30.0) -> None:
    """Let the console under ``pilot`` run until ``condition`` holds (its messages are
    processed between polls); fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await pilot.pause(0.02)
