"""Where a served console can be reached, for the links in notifications.

``runeconsole serve`` writes ``serve.json`` (its URL, without the token, and its pid) in
the state directory it serves from, and removes it on the way out; a record whose process
is gone (a server killed with -9) is ignored. A project's console is announced in the
project's ``.claude/state``; a fleet's in the user's state directory
(``$XDG_STATE_HOME/runeconsole``, else ``~/.local/state/runeconsole``), which every
project's notifications also look at.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.pids import pid_alive

RECORD_NAME = "serve.json"


def user_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "runeconsole"


@contextlib.contextmanager
def announced(state_dir: Path, url: str) -> Iterator[None]:
    """Record ``url`` as this process's served console while the block runs."""
    path = state_dir / RECORD_NAME
    atomic_write_json(path, {"url": url, "pid": os.getpid()}, 0o600)
    try:
        yield
    finally:
        with contextlib.suppress(OSError, UnreadableFile):
            if read_json_object(path).get("pid") == os.getpid():
                path.unlink()


def served_url(state_dirs: Iterable[Path]) -> str | None:
    """The URL of a served console that is running, from the first directory that has one."""
    for directory in state_dirs:
        try:
            record = read_json_object(directory / RECORD_NAME)
        except (OSError, UnreadableFile):
            continue
        url, pid = record.get("url"), record.get("pid")
        if isinstance(url, str) and url.startswith(("http://", "https://")) and pid_alive(pid):
            return url
    return None
