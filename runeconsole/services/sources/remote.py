"""A project on another host, followed through its event stream over SSH.

``RemoteSource`` runs ``ssh … HOST runeconsole events --follow --json --root R`` and keeps
the rows it tells (``(kind, key) -> data``). Each connection starts from the stream's
snapshot, which replaces every row at once when it is complete, so nothing is lost or
left over when a connection drops: the next one starts fresh. A source that cannot be
reached (ssh refused, host down, root missing, runeconsole missing or of another
version, a stream gone silent past its heartbeats) is ``down`` with the reason, and is
tried again after a backoff that doubles up to a ceiling; the others are not held up.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from runeconsole import __version__
from runeconsole.adapters.ssh import SshTransport, failure_reason, read_back
from runeconsole.services.events import PROTOCOL, Event
from runeconsole.services.events.sections import RowKey

if TYPE_CHECKING:
    from runeconsole.core.fleet_file import SourceSpec

CONNECTING, UP, DOWN = "connecting", "up", "down"
HEARTBEAT = 2.0  # asked of the remote stream; silence past STALE_BEATS of them is a drop
STALE_BEATS = 4
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 30.0

# (source, events, reset): ``reset`` when a new snapshot replaced every row
Listener = Callable[["RemoteSource", list[Event], bool], None]


@dataclass(frozen=True)
class SourceStatus:
    state: str
    reason: str | None = None
    retry_in: float | None = None  # seconds until the next attempt, while down


class StreamBroken(Exception):
    """The stream said something a reader cannot follow; the reason is for the row."""


class RemoteSource:
    def __init__(
        self,
        spec: SourceSpec,
        listener: Listener,
        *,
        transport: SshTransport | None = None,
        heartbeat: float = HEARTBEAT,
        backoff: tuple[float, float] = (BACKOFF_FIRST, BACKOFF_MAX),
        present: bool = False,
    ) -> None:
        if spec.host is None:
            raise ValueError(f"{spec.name} is a local source")
        self.spec = spec
        self.name = spec.name
        self.present = present  # the stream stands for an open console (``--present``)
        self.transport = transport or SshTransport(spec.host, spec.ssh)
        self.listener = listener
        self.heartbeat = heartbeat
        self.backoff = backoff
        self.rows: dict[RowKey, dict[str, Any]] = {}
        self.meta: dict[str, Any] = {}  # the snapshot line (root, version) of the live stream
        self.status = SourceStatus(CONNECTING)
        self.connections = 0  # snapshots taken in (a reconnection is one more)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._errors: IO[bytes] | None = None
        self._lock = threading.Lock()

    # -- running -----------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"source-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._end_process()
        if self._thread is not None:
            self._thread.join(timeout)

    def drop(self) -> None:
        """End the current connection's stream (as a network failure would)."""
        self._end_process()

    def stream_argv(self) -> list[str]:
        return [
            *self.spec.command,
            "events",
            "--follow",
            "--json",
            "--heartbeat",
            f"{self.heartbeat:g}",
            *(["--present"] if self.present else []),
            "--root",
            self.spec.root,
        ]

    def _run(self) -> None:
        delay = self.backoff[0]
        while not self._stop.is_set():
            took_snapshot = False
            try:
                took_snapshot = self._follow_once()
                reason = "the stream ended"
            except StreamBroken as exc:
                reason = str(exc)
            except OSError as exc:
                reason = f"cannot run ssh: {exc}"
            finally:
                code, stderr = self._end_process()
            if self._stop.is_set():
                return
            if code not in (None, 0, -9) and stderr is not None:
                reason = failure_reason(code, stderr, self.spec.host or "")
            delay = self.backoff[0] if took_snapshot else min(delay * 2, self.backoff[1])
            self._set_status(SourceStatus(DOWN, reason, delay))
            self._notify([], False)
            self._stop.wait(delay)

    def _follow_once(self) -> bool:
        """One connection: the snapshot, then changes until it ends. True if a snapshot
        was taken in (the next attempt then starts at the first backoff step)."""
        self._set_status(SourceStatus(CONNECTING))
        errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _end_process
        process = self.transport.popen(self.stream_argv(), errors)
        with self._lock:
            self._process, self._errors = process, errors
        lines = _Lines(process, self.heartbeat * STALE_BEATS + self.transport.connect_timeout)
        first = lines.next()
        if first is None:
            return False
        self._check_hello(first)
        snapshot: dict[RowKey, dict[str, Any]] = {}
        events: list[Event] = []
        lines.silence = self.heartbeat * STALE_BEATS
        while (event := lines.next()) is not None:
            if event.get("event") == "ready":
                break
            apply(snapshot, event)
            events.append(event)
        else:
            return False
        with self._lock:
            self.rows, self.meta = snapshot, first
            self.connections += 1
        self._set_status(SourceStatus(UP))
        self._notify(events, True)
        while (event := lines.next()) is not None:
            if event.get("event") == "heartbeat":
                continue
            with self._lock:
                apply(self.rows, event)
            self._notify([event], False)
        return True

    def _check_hello(self, event: Event) -> None:
        if event.get("event") != "snapshot":
            raise StreamBroken(f"not a runeconsole event stream (it began {_short(event)})")
        version = event.get("version")
        if event.get("protocol") != PROTOCOL or version != __version__:
            raise StreamBroken(
                f"runeconsole {version} on {self.spec.host}, {__version__} here: "
                "install the same version on both"
            )

    def _end_process(self) -> tuple[int | None, str | None]:
        with self._lock:
            process, self._process = self._process, None
            errors, self._errors = self._errors, None
        if process is None or errors is None:
            return None, None
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
        with errors:
            return process.returncode, read_back(errors)

    def _set_status(self, status: SourceStatus) -> None:
        self.status = status

    def _notify(self, events: list[Event], reset: bool) -> None:
        try:
            self.listener(self, events, reset)
        except Exception:  # a listener's bug must not stop the source
            if os.environ.get("RUNECONSOLE_DEBUG"):
                raise


def apply(rows: dict[RowKey, dict[str, Any]], event: Event) -> None:
    """One upsert or remove, applied to ``rows``; anything else is ignored."""
    kind, key = event.get("kind"), event.get("key")
    if not isinstance(kind, str) or not isinstance(key, str):
        return
    if event.get("event") == "upsert" and isinstance(event.get("data"), dict):
        rows[(kind, key)] = event["data"]
    elif event.get("event") == "remove":
        rows.pop((kind, key), None)


class _Lines:
    """JSON lines from a process's stdout, each within ``silence`` seconds of the last."""

    def __init__(self, process: subprocess.Popen[bytes], silence: float) -> None:
        assert process.stdout is not None
        self.fd = process.stdout.fileno()
        self.silence = silence
        self.buffer = b""
        self.lines: list[bytes] = []

    def next(self) -> Event | None:
        """The next event; None when the stream ended; ``StreamBroken`` when it went
        silent or said something that is not an event."""
        while not self.lines:
            ready, _, _ = select.select([self.fd], [], [], self.silence)
            if not ready:
                raise StreamBroken(f"no heartbeat for {self.silence:g}s: connection lost")
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
            *done, self.buffer = self.buffer.split(b"\n")
            self.lines = [line for line in done if line.strip()]
        line = self.lines.pop(0)
        try:
            event = json.loads(line)
        except ValueError:
            raise StreamBroken(f"not an event: {line[:80].decode(errors='replace')!r}") from None
        if not isinstance(event, dict):
            raise StreamBroken(f"not an event: {line[:80].decode(errors='replace')!r}")
        return event


def _short(event: Event) -> str:
    return json.dumps(event)[:80]


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` until true or ``timeout`` (for callers that start a source and
    want its first snapshot before going on)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True
