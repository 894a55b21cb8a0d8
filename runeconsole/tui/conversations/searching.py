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
    def __init__(self, project: Project) -> None:
        self.project = project
        self.index: ConversationIndex | None = None
        self.rescanned = float("-inf")
        self.lock = threading.Lock()

    def __call__(self, query: Query, limit: int) -> tuple[list[Hit], list[str]]:
        with self.lock:
            if self.index is None:
                self.index = ConversationIndex(self.project)
            index = self.index
            told = len(index.messages)
            if time.monotonic() - self.rescanned > RESCAN_EVERY:
                index.rescan()
                self.rescanned = time.monotonic()
        hits = index.search(query.words, limit=limit, **query.filters())
        return hits, list(index.messages[told:])

    def feed(self, keys: Sequence[str]) -> int:
        """The agents' transcripts, what was appended since they were last read (their
        hooks said a turn was written); the turns indexed."""
        with self.lock:
            if self.index is None:
                self.index = ConversationIndex(self.project)
            index = self.index
        fed = 0
        for key in keys:
            fed += index.feed_agent(key)
        return fed

    def open(self, hit: Hit) -> Transcript:
        return LocalTranscript(self.project, hit.key, path=hit.path)

    def close(self) -> None:
        if self.index is not None:
            self.index.close()


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
