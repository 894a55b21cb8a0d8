"""Named pause points, so a crash test can kill -9 a real process at an exact place.

A kill "between two writes" cannot be timed from outside the process. A test names
the place in ``RUNECONSOLE_PAUSE_AT`` and a directory in ``RUNECONSOLE_PAUSE_DIR``;
the process that reaches it writes ``{name}.paused`` (its pid) there and waits until
``{name}.go`` appears or a minute has passed. Anywhere else it costs one lookup.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from runeconsole.core.files import atomic_write_bytes

PAUSE_AT_ENV = "RUNECONSOLE_PAUSE_AT"
PAUSE_DIR_ENV = "RUNECONSOLE_PAUSE_DIR"
MAX_PAUSE_SECONDS = 60.0


def pause_point(name: str) -> None:
    """Wait here if a test asked to (``RUNECONSOLE_PAUSE_AT=name``); otherwise return at once."""
    if os.environ.get(PAUSE_AT_ENV) != name:
        return
    directory = Path(os.environ.get(PAUSE_DIR_ENV) or ".")
    atomic_write_bytes(directory / f"{name}.paused", str(os.getpid()).encode())
    go = directory / f"{name}.go"
    deadline = time.monotonic() + MAX_PAUSE_SECONDS
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
