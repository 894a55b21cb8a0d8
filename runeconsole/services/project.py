"""The project every service works on: its root, where each kind of state lives, the clock,
and the settings of ``.claude/talisman.yml``.

Whoever starts the work builds one ``Project`` (the CLI once per command, ``create_app``
once per console) and hands it to every service. The talisman is read at most once, on
first use, and the builder decides what a bad value does: ``strict`` refuses it with the
file, the key and what is allowed; lenient (the console, heartbeats) keeps it in
``talisman.problems`` for the caller to show and uses the default. A service asks for its
own typed settings with ``settings(SettingsClass)`` and never loads the file itself.

It lives at the foot of ``services``, not in ``core``: it holds the clock, which is an
adapter, and ``core`` imports nothing above itself. It knows paths and settings, and no
protocol.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol, Self, TypeVar

from runeconsole.adapters.clock import Clock, SystemClock
from runeconsole.core.config import Talisman
from runeconsole.core.paths import ProjectPaths


class FromTalisman(Protocol):
    """Settings that read their own section of the talisman (``LivenessSettings``, …)."""

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> Self: ...


S = TypeVar("S", bound=FromTalisman)


class Project:
    def __init__(
        self, root: Path, clock: Clock | None = None, *, strict: bool = True, via: str = "cli"
    ) -> None:
        self.root = root
        self.clock = clock or SystemClock()
        self.strict = strict
        self.via = via  # who acts through it: the "console" or the "cli" (the journal says)
        self.paths = ProjectPaths(root)
        self._talisman: Talisman | None = None
        self._settings: dict[type, object] = {}
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Project({str(self.root)!r}, strict={self.strict})"

    @property
    def talisman(self) -> Talisman:
        """``.claude/talisman.yml``, read on first use and kept."""
        with self._lock:
            if self._talisman is None:
                self._talisman = Talisman.load(self.root, strict=self.strict)
            return self._talisman

    def settings(self, kind: type[S]) -> S:
        """``kind`` as the talisman sets it (worked out once per kind; a strict project
        raises for a bad value each time it is asked)."""
        with self._lock:
            found = self._settings.get(kind)
            if found is None:
                found = self._settings[kind] = kind.from_talisman(self.talisman)
            assert isinstance(found, kind)  # each kind is stored under itself
            return found
