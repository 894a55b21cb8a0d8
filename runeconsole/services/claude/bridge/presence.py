"""Whether a console is open on the project, so a hook knows whether anyone can answer.

A console holds ``.claude/state/.locks/console.lock`` (an OS lock, freed the moment the
console dies, however it dies) and writes its pid to ``.claude/state/claude/console.json``
while it does. A second console on the same root waits its turn (``try_hold`` again
later). The hook only probes the lock, without waiting and without taking it from a
console (``core.locks.held_elsewhere``).
"""

from __future__ import annotations

import contextlib
import os

from runeconsole.core.files import read_json_object
from runeconsole.core.locks import LockBusy, held_elsewhere, owned
from runeconsole.core.paths import ProjectPaths

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

LOCK_NAME = "console"
OWNER_NAME = "console.json"


def lock_path(paths: ProjectPaths) -> str:
    return os.fspath(paths.lock_for(LOCK_NAME))


def console_open(paths: ProjectPaths) -> bool:
    """A console holds the project's console lock now."""
    return held_elsewhere(lock_path(paths))


def console_pid(paths: ProjectPaths) -> int | None:
    """The pid the open console wrote (``None`` when none is open or it wrote none)."""
    if not console_open(paths):
        return None
    try:
        pid = read_json_object(paths.claude_bridge / OWNER_NAME).get("pid")
    except Exception:
        return None
    return pid if isinstance(pid, int) else None


class ConsolePresence:
    """Held by a console for as long as it is open (``try_hold`` until it succeeds)."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self._stack: contextlib.ExitStack | None = None

    @property
    def held(self) -> bool:
        return self._stack is not None

    def try_hold(self, **info: Any) -> bool:
        """Take the lock if no other console has it; True while this console holds it."""
        if self._stack is not None:
            return True
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(
                owned(
                    self.paths.lock_for(LOCK_NAME),
                    self.paths.inside(self.paths.claude_bridge / OWNER_NAME),
                    "the console lock",
                    **info,
                )
            )
        except LockBusy:
            return False
        self._stack = stack
        return True

    def release(self) -> None:
        if self._stack is not None:
            stack, self._stack = self._stack, None
            stack.close()
