"""Helpers for tests that drive real tmux sessions on a private socket."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from runeconsole.demo.fake_agent import command as fake_agent_command

T = TypeVar("T")


def wait_for(probe: Callable[[], T], timeout: float = 10.0, every: float = 0.05) -> T:
    """Poll ``probe`` until it returns something truthy; fail with its last value."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not value and time.monotonic() < deadline:
        time.sleep(every)
        value = probe()
    assert value, f"still {value!r} after {timeout}s"
    return value


def fake_agent(key: str, root: Path, *extra: str) -> list[str]:
    """The scripted fake agent, quick and reproducible."""
    return fake_agent_command(key, root, "--tick", "0.2", "--seed", "3", *extra)


def sleeper(seconds: int = 120) -> list[str]:
    return [sys.executable, "-c", f"import time; time.sleep({seconds})"]


def printer(text: str, seconds: int = 120) -> list[str]:
    return [
        sys.executable,
        "-c",
        f"import time; print({text!r}, flush=True); time.sleep({seconds})",
    ]
