"""The queue's test slots: a detached worktree each, inside the git directory
(``runeconsole-merge-queue``, then ``-2``, ``-3``, …: never an agent's worktree or the
operator's checkout), and the test runs, each in a thread of its own, so the next batch
tests while the one ahead does. A run can be stopped: its batch was built on a tip that
changed. Every run's end arrives on one queue, stamped with the token ``start`` gave it.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runeconsole.adapters import git_worktrees as gw
from runeconsole.adapters.processes import StreamResult, run_streaming
from runeconsole.core.errors import RuneError
from runeconsole.core.validate import same_path

WORKTREE_DIR = "runeconsole-merge-queue"
JOIN_SECONDS = 15.0  # for a stopped run's thread to end


def slot_path(common: Path, slot: int) -> Path:
    return common / (WORKTREE_DIR if slot == 0 else f"{WORKTREE_DIR}-{slot + 1}")


def slot_worktrees(root: Path) -> list[Path]:
    """Every slot worktree there is (a dead processor's too): on disk, or still known to git."""
    common = gw.common_dir(root)
    found = {p for p in common.glob(f"{WORKTREE_DIR}*") if p.is_dir()}
    for worktree in gw.worktrees(root):
        if worktree.path.name.startswith(WORKTREE_DIR) and same_path(worktree.path.parent, common):
            found.add(worktree.path)
    return sorted(found)


@dataclass(frozen=True)
class Finished:
    token: int
    slot: int
    result: StreamResult


class Slots:
    def __init__(self, root: Path, count: int, git_timeout: float) -> None:
        self.root = root
        self.count = max(1, count)
        self.git_timeout = git_timeout
        self.common = gw.common_dir(root)
        self.results: queue.Queue[Finished] = queue.Queue()
        self._busy: set[int] = set()
        self._made: set[int] = set()
        self._stops: dict[int, threading.Event] = {}
        self._threads: dict[int, threading.Thread] = {}
        self._tokens = itertools.count(1)

    def path(self, slot: int) -> Path:
        return slot_path(self.common, slot)

    def free(self) -> int:
        return self.count - len(self._busy)

    def take(self) -> int | None:
        """The first free slot, now busy; ``None`` if every slot is."""
        slot = next((n for n in range(self.count) if n not in self._busy), None)
        if slot is not None:
            self._busy.add(slot)
        return slot

    def give_back(self, slot: int) -> None:
        self._busy.discard(slot)

    def check_out(self, slot: int, commit: str) -> Path:
        """The slot's worktree holding ``commit`` (made the first time)."""
        path = self.path(slot)
        if slot in self._made:
            gw.switch_detached(path, commit, timeout=self.git_timeout)
        else:
            gw.remove_worktree(self.root, path)
            gw.add_detached(self.root, path, commit, timeout=self.git_timeout)
            self._made.add(slot)
        return path

    def start(
        self,
        slot: int,
        command: list[str],
        *,
        env: dict[str, str],
        timeout: float,
        on_line: Callable[[str], None] | None,
    ) -> int:
        """Run ``command`` in the slot's worktree in a thread; returns its token."""
        token = next(self._tokens)
        stop = threading.Event()
        path = self.path(slot)

        def run() -> None:
            try:
                result = run_streaming(command, path, timeout, on_line, env=env, cancel=stop)
            except RuneError as exc:  # the command could not be started
                result = StreamResult(127, False, [exc.message], 0.0)
            self.results.put(Finished(token, slot, result))

        thread = threading.Thread(target=run, name=f"merge-queue-slot-{slot + 1}", daemon=True)
        self._stops[token], self._threads[token] = stop, thread
        thread.start()
        return token

    def stop(self, token: int) -> None:
        """Stop a run; its end still arrives on ``results`` (as cancelled)."""
        if token in self._stops:
            self._stops[token].set()

    def wait(self, timeout: float) -> Finished | None:
        """The next run to end, or ``None`` after ``timeout`` seconds."""
        try:
            finished = self.results.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        self._stops.pop(finished.token, None)
        self._threads.pop(finished.token, None)
        return finished

    def close(self) -> None:
        """Stop every run, wait for their threads, remove the worktrees made."""
        for stop in self._stops.values():
            stop.set()
        for thread in self._threads.values():
            thread.join(JOIN_SECONDS)
        self._stops.clear()
        self._threads.clear()
        for slot in sorted(self._made):
            with contextlib.suppress(RuneError):
                gw.remove_worktree(self.root, self.path(slot))
        self._made.clear()
        self._busy.clear()
