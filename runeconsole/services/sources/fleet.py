"""Every source of a fleet file as one event stream (``runeconsole events --fleet FILE``).

Local roots are followed in-process (``EventStream`` in a thread), remote ones over SSH
(``RemoteSource``); their rows are merged with keys ``source/key`` when more than one
source is open (one source keeps its keys, as ``--root`` does). Each source also has a
row of kind ``source``: its state (``connecting``, ``up``, ``down``) and, when down, the
reason. A source that goes down has its rows removed, so a reader never shows a host's
old state as current; when it is back its fresh snapshot brings them again.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runeconsole import __version__
from runeconsole.adapters.clock import Clock
from runeconsole.adapters.ssh import SshTransport
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.claude.bridge.presence import ConsolePresence
from runeconsole.services.events import PROTOCOL, Event, EventStream, follow
from runeconsole.services.events.sections import RowKey
from runeconsole.services.project import Project
from runeconsole.services.sources.actions import LocalActions, RemoteActions, Unreachable
from runeconsole.services.sources.remote import (
    BACKOFF_FIRST,
    BACKOFF_MAX,
    CONNECTING,
    DOWN,
    UP,
    RemoteSource,
    apply,
)

SOURCE = "source"
ROW_EVENTS = ("upsert", "remove")


def latest(events: list[Event]) -> list[Event]:
    """Only the last event of each row (a snapshot need not tell a row's history)."""
    last: dict[tuple[str, str], Event] = {}
    for event in events:
        last.pop((event["kind"], event["key"]), None)
        last[(event["kind"], event["key"])] = event
    return [event for event in last.values() if event["event"] == "upsert"]


class FleetFeed:
    """Merges the sources' events into one stream of lines for ``emit``."""

    def __init__(
        self,
        specs: list[SourceSpec],
        *,
        heartbeat: float = 5.0,
        sockets: Path | None = None,
        clock: Clock | None = None,
        present: bool = False,
    ) -> None:
        self.specs = specs
        # Each source's stream stands for an open console there (``events --present``):
        # Claude Code's questions and permission requests come to this feed's reader.
        self.present = present
        self.clock = clock  # local roots' (tests and screenshots pass a manual one)
        self.sockets = sockets  # ssh control sockets' directory (default: a private one)
        self.prefixed = len(specs) > 1
        self.heartbeat = heartbeat
        self.rows: dict[str, dict[RowKey, dict[str, Any]]] = {s.name: {} for s in specs}
        self.states: dict[str, dict[str, Any]] = {}
        self._queue: queue.Queue[list[Event]] = queue.Queue()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._remotes: list[RemoteSource] = []
        self._threads: list[threading.Thread] = []

    def key(self, source: str, key: str) -> str:
        return f"{source}/{key}" if self.prefixed else key

    def source_of(self, key: str) -> str:
        """The source a merged key belongs to (``web/worker-a`` -> ``web``)."""
        if not self.prefixed:
            return self.specs[0].name if self.specs else ""
        return key.split("/", 1)[0]

    def own_key(self, source: str, key: str) -> str:
        """A merged key back to the key its source knows (``web/worker-a`` -> ``worker-a``)."""
        prefix = f"{source}/"
        return key[len(prefix) :] if self.prefixed and key.startswith(prefix) else key

    def actions(self, source: str) -> LocalActions | RemoteActions:
        """What acts on ``source``'s rows: in-process for a root of this machine, the same
        CLI command over the source's SSH connection for a host. Refused (``Unreachable``)
        while the source is not up: nothing is sent."""
        spec = next((s for s in self.specs if s.name == source), None)
        if spec is None:
            raise Unreachable(f"{source}: no such source in the fleet file")
        if spec.local:
            state = self.states.get(source, {})
            if state.get("state") != UP:
                why = state.get("reason") or "still connecting"
                raise Unreachable(f"{source} is unreachable ({why}): nothing was done")
            return LocalActions(Project(spec.local_root().resolve(), self.clock, strict=False))
        return RemoteActions(self.remote(source))

    def remote(self, source: str) -> RemoteSource:
        """The connection that follows a host's source (it is started by ``start``)."""
        return next(r for r in self._remotes if r.name == source)

    # -- running -----------------------------------------------------------------------

    def run(self, emit: Callable[[list[Event]], None], *, follow_changes: bool = True) -> None:
        """Write the merged snapshot (once every source has answered or failed), then, with
        ``follow_changes``, every change until ``stop`` or ``emit`` raises."""
        self.start()
        try:
            emit(
                [
                    {
                        "event": "snapshot",
                        "protocol": PROTOCOL,
                        "version": __version__,
                        "sources": [s.name for s in self.specs],
                    }
                ]
            )
            pending: list[Event] = []
            while not self._stop.is_set() and not self._all_answered():
                pending += self._take(0.5)
            pending += self._take(0)  # what came with the last answers
            rows = sum(len(r) for r in self.rows.values()) + len(self.states)
            emit([*latest(pending), {"event": "ready", "rows": rows}])
            while follow_changes and not self._stop.is_set():
                events = self._take(self.heartbeat)
                emit(events or [{"event": "heartbeat"}])
        finally:
            self.stop()

    def start(self) -> None:
        for spec in self.specs:
            self._status(spec.name, CONNECTING, None)
            if spec.local:
                thread = threading.Thread(target=self._follow_local, args=(spec,), daemon=True)
                thread.start()
                self._threads.append(thread)
            else:
                transport = SshTransport(spec.host or "", spec.ssh, sockets=self.sockets)
                source = RemoteSource(spec, self._heard, transport=transport, present=self.present)
                self._remotes.append(source)
                source.start()

    def stop(self) -> None:
        self._stop.set()
        for source in self._remotes:
            source.stop()
        for thread in self._threads:  # a local stream lets go of its console presence
            if thread is not threading.current_thread():
                thread.join(2.0)

    def _all_answered(self) -> bool:
        return all(state["state"] != CONNECTING for state in self.states.values())

    def _take(self, timeout: float) -> list[Event]:
        """What is queued, waiting up to ``timeout`` for the first (0: none)."""
        try:
            events = self._queue.get(timeout=timeout) if timeout else self._queue.get_nowait()
        except queue.Empty:
            return []
        while not self._queue.empty():
            events += self._queue.get_nowait()
        return events

    # -- sources -------------------------------------------------------------------------

    def _follow_local(self, spec: SourceSpec) -> None:
        """Follow a root of this machine; while it cannot be (no such directory yet, its
        stream failed) it is down with the reason and tried again, after a backoff that
        doubles up to a ceiling, as a host is."""
        delay = BACKOFF_FIRST
        while not self._stop.is_set():
            root = spec.local_root()
            if not root.is_dir():
                self._status(spec.name, DOWN, f"root {root}: no such directory")
            else:
                stream = EventStream(Project(Path(root).resolve(), self.clock, strict=False))
                try:
                    follow(
                        stream,
                        lambda events: self._local(spec.name, events),
                        stop=self._stop,
                        heartbeat=self.heartbeat,
                        presence=ConsolePresence(stream.project.paths) if self.present else None,
                    )
                except Exception as exc:  # the other sources go on; this one says why
                    self._status(spec.name, DOWN, f"{type(exc).__name__}: {exc}")
                    self._merge(spec.name, [], True)  # its rows are not current any more
            if self._stop.wait(delay):
                return
            delay = min(delay * 2, BACKOFF_MAX)

    def _local(self, name: str, events: list[Event]) -> None:
        reset = bool(events) and events[0].get("event") == "snapshot"
        self._merge(name, [e for e in events if e.get("event") in ROW_EVENTS], reset)
        if reset:
            self._status(name, UP, None)

    def _heard(self, source: RemoteSource, events: list[Event], reset: bool) -> None:
        status = source.status
        if status.state == DOWN:
            self._merge(source.name, [], True)  # its rows are not current any more
        elif events or reset:
            self._merge(source.name, events, reset)
        self._status(source.name, status.state, status.reason)

    def _merge(self, name: str, events: list[Event], reset: bool) -> None:
        out: list[Event] = []
        with self._lock:
            rows = self.rows[name]
            if reset:
                fresh: dict[RowKey, dict[str, Any]] = {}
                for event in events:
                    apply(fresh, event)
                out += [self._remove(name, key) for key in rows.keys() - fresh.keys()]
                out += [
                    self._upsert(name, key, data)
                    for key, data in fresh.items()
                    if rows.get(key) != data
                ]
                self.rows[name] = fresh
            else:
                for event in events:
                    apply(rows, event)
                    kind, key = str(event.get("kind")), str(event.get("key"))
                    if event.get("event") == "upsert":
                        out.append(self._upsert(name, (kind, key), event.get("data") or {}))
                    else:
                        out.append(self._remove(name, (kind, key)))
        if out:
            self._queue.put(out)

    def _upsert(self, source: str, key: RowKey, data: dict[str, Any]) -> Event:
        return {
            "event": "upsert",
            "kind": key[0],
            "key": self.key(source, key[1]),
            "source": source,
            "data": data,
        }

    def _remove(self, source: str, key: RowKey) -> Event:
        return {
            "event": "remove",
            "kind": key[0],
            "key": self.key(source, key[1]),
            "source": source,
        }

    def _status(self, name: str, state: str, reason: str | None) -> None:
        spec = next(s for s in self.specs if s.name == name)
        data = {"state": state, "reason": reason, "host": spec.host, "root": spec.root}
        with self._lock:
            if self.states.get(name) == data:
                return
            # Queued before it is seen: a snapshot that sees every source answered finds
            # each answer (and the rows merged before it) in the queue.
            self._queue.put(
                [{"event": "upsert", "kind": SOURCE, "key": name, "source": name, "data": data}]
            )
            self.states[name] = data
