"""Helpers for tests that drive real tmux sessions on a private socket."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from runeconsole.demo.fake_agent import command as fake_agent_command
from runeconsole.services.supervision.service import MonitorReport, Supervisor
from tests.support.polling import wait_until


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


@contextlib.contextmanager
def monitoring(supervisor: Supervisor, interval: float) -> Iterator[list[MonitorReport]]:
    """The supervisor's monitor loop in a thread for the block; yields its reports as
    they come (the loop is stopped and joined at the end)."""
    reports: list[MonitorReport] = []
    stop = threading.Event()
    loop = threading.Thread(
        target=supervisor.run_monitor,
        kwargs={"interval": interval, "stop": stop, "on_report": reports.append},
        daemon=True,
    )
    loop.start()
    try:
        yield reports
    finally:
        stop.set()
        loop.join(timeout=10)


def wait_for_monitor(supervisor: Supervisor, pid: int) -> None:
    """Until the monitor in process ``pid`` has saved a pass (so it holds the lock)."""
    saved = supervisor.observations_path
    wait_until(lambda: saved.exists() and json.loads(saved.read_text())["monitor_pid"] == pid)
