"""``runeconsole serve`` as a real process on a free loopback port, for the browser
tests and the benchmark: its URL and token link as it printed them on start."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.cli import cli_env


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str  # http://127.0.0.1:PORT/ (or the --public-url)
    link: str  # the URL with ?token=
    listening: str = ""  # where it listens: the URL without --public-url

    @property
    def token(self) -> str:
        return self.link.partition("?token=")[2]

    @property
    def origin(self) -> str:
        return self.url.rstrip("/")


@contextlib.contextmanager
def serving(*args: str, timeout: float = 60.0) -> Iterator[Served]:
    """``runeconsole serve ARGS --port 0 --json``, stopped (SIGTERM) on the way out."""
    process = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "serve", *args, "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        start_new_session=True,
    )
    try:
        line = _first_line(process, timeout)
        started = json.loads(line)
        yield Served(process, started["url"], started["link"], started["listening"])
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise AssertionError(f"runeconsole serve printed nothing in {timeout}s")
    line = process.stdout.readline()
    if not line:
        err = process.stderr.read() if process.stderr else ""
        raise AssertionError(f"runeconsole serve exited {process.wait()}: {err}")
    return line


def root_args(root: Path) -> tuple[str, ...]:
    return ("--root", str(root), "--no-monitor")
