"""What the search screen searches and opens, in each console (every call blocking: a
worker's).

``IndexSearch``: this root's index (``ConversationIndex``); what changed since its last
rescan (by size and mtime: only the bytes appended are read) is read first, at most every
``RESCAN_EVERY`` seconds, so a search finds what the agents said a moment ago.
``FleetSearch``: every source's (a root of this machine's index as above, a host's
``runeconsole search --json`` over its SSH channel), merged newest first; a source that
cannot answer is said, the others' hits shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from runeconsole.core.errors import RuneError
from runeconsole.services.conversations.index import ConversationIndex
from runeconsole.services.conversations.query import Hit
from runeconsole.services.project import Project
from runeconsole.services.sources import LocalActions, RemoteActions
from runeconsole.services.sources.actions import named, newest_first
from runeconsole.tui.conversations.search import Query
from runeconsole.tui.conversations.transcripts import LocalTranscript, RemoteTranscript, Transcript

RESCAN_EVERY = 10.0  # seconds


class IndexSearch:
    """One index of this root, used by one thread at a time: the search screen's searches
    and the feeds of what the agents' hooks said was written, until the console closes
    it (a feed still running then finishes first; none starts after)."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.index: ConversationIndex | None = None
        self.rescanned = float("-inf")
        self.lock = threading.Lock()
        self.closed = False

    def _index(self) -> ConversationIndex:
        """The index (made on first use); held under ``lock``."""
        if self.closed:
            raise RuneError("the console is closing: the conversation index is closed")
        if self.index is None:
            self.index = ConversationIndex(self.project)
        return self.index

    def __call__(self, query: Query, limit: int) -> tuple[list[Hit], list[str]]:
        with self.lock:
            index = self._index()
            told = len(index.messages)
            if time.monotonic() - self.rescanned > RESCAN_EVERY:
                index.rescan()
                self.rescanned = time.monotonic()
            hits = index.search(query.words, limit=limit, **query.filters())
            return hits, list(index.messages[told:])

    def feed(self, keys: Sequence[str]) -> int:
        """The agents' transcripts, what was appended since they were last read (their
        hooks said a turn was written); the turns indexed (none once closed)."""
        with self.lock:
            if self.closed:
                return 0
            index = self._index()
            return sum(index.feed_agent(key) for key in keys)

    def open(self, hit: Hit) -> Transcript:
        return LocalTranscript(self.project, hit.key, path=hit.path)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.index is not None:
                self.index.close()
                self.index = None


class FleetSearch:
    """Every source's index. ``actions``: a source's (``FleetFeed.actions``); ``key``: the
    fleet's key of a source's agent."""

    def __init__(
        self,
        names: Sequence[str],
        actions: Callable[[str], LocalActions | RemoteActions],
        key: Callable[[str, str], str],
    ) -> None:
        self.names, self.actions, self.key = list(names), actions, key
        self.local: dict[str, IndexSearch] = {}

    def __call__(self, query: Query, limit: int) -> tuple[list[Hit], list[str]]:
        groups: list[list[Hit]] = []
        notes: list[str] = []
        for name in self.names:
            try:
                actions = self.actions(name)
                if isinstance(actions, LocalActions):
                    search = self.local.setdefault(name, IndexSearch(actions.project))
                    hits, said = search(query, limit)
                    groups.append(named(hits, name))
                    notes += [f"{name}: {note}" for note in said]
                else:
                    groups.append(actions.search(query.words, limit=limit, **query.filters()))
            except RuneError as exc:
                notes.append(f"{name}: {exc.message}")
        return newest_first(groups, limit), notes

    def open(self, hit: Hit) -> Transcript:
        actions = self.actions(hit.source)
        if isinstance(actions, LocalActions):
            return LocalTranscript(actions.project, hit.key, path=hit.path, where=hit.source)
        fleet_key = self.key(hit.source, hit.key)
        return RemoteTranscript(actions, fleet_key, hit.key, hit.source, hit.session_id)

    def close(self) -> None:
        for search in self.local.values():
            search.close()
