"""A hook waiting for the console: polled, bounded, and given up under the call's lock.

Every call a hook hands to the console (an AskUserQuestion call, a permission request)
waits the same way: ``look`` is asked every ``POLL_SECONDS`` for the decision, until it
finds one, the wait runs out, or the console closes and stays closed for
``CONSOLE_GONE_GRACE``. Giving up takes the call's lock and looks once more, so a
decision written at that very moment (under the same lock) either reaches the agent or
is refused; never both, never lost silently.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from runeconsole.core.locks import flocked
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge import presence

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

POLL_SECONDS = 0.02
PRESENCE_EVERY = 0.5
CONSOLE_GONE_GRACE = 3.0


def wait_for(
    paths: ProjectPaths,
    lock: str,
    look: Callable[[], T | None],
    give_up: Callable[[str], None],
    seconds: float,
) -> T | None:
    """What ``look`` found, or ``None`` once ``give_up`` was told why nobody decided."""
    deadline = time.monotonic() + seconds
    absent_since: float | None = None
    next_look = 0.0
    while True:
        found = look()
        if found is not None:
            return found
        moment = time.monotonic()
        if moment >= deadline:
            return give_up_unless_decided(
                paths, lock, look, give_up, f"nobody answered within {seconds:g}s"
            )
        if moment >= next_look:
            next_look = moment + PRESENCE_EVERY
            if presence.console_open(paths):
                absent_since = None
            elif absent_since is None:
                absent_since = moment
            elif moment - absent_since >= CONSOLE_GONE_GRACE:
                why = "the console closed before anyone answered"
                return give_up_unless_decided(paths, lock, look, give_up, why)
        time.sleep(POLL_SECONDS)


def give_up_unless_decided(
    paths: ProjectPaths,
    lock: str,
    look: Callable[[], T | None],
    give_up: Callable[[str], None],
    reason: str,
) -> T | None:
    """Under the call's lock: the decision written meanwhile, else ``give_up(reason)``."""
    with flocked(os.fspath(paths.lock_for(lock)), what=lock):
        found = look()
        if found is not None:
            return found
        give_up(reason)
    return None
