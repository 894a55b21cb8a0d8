"""The team's remote, for a queue that lands there (``runeconsole.merge_queue.remote``).

Before a batch is built on ``REMOTE/main`` it is fetched; a green batch lands by pushing
its tip as a fast-forward (never forced), and the local ``main`` follows when it can
(it is not ahead of the remote, its checkout has nothing the move would overwrite). A
remote that cannot be reached is waited for with back-off, each try said, and never
fails an entry: after ``remote_wait_seconds`` the run stops and the entries wait in the
queue. What was fetched last, the last error and the pushes lost to someone else's are
kept in the queue's file (``remote``), for the pane's header and ``stats``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from runeconsole.adapters import git_remote as gr
from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age, parse_iso
from runeconsole.services.merge_queue.model import REMOTE_STATE
from runeconsole.services.merge_queue.queue_file import QueueFile

T = TypeVar("T")
# Told before each wait for an unreachable remote: (what failed, seconds until the next
# try, tries so far).
OnWait = Callable[[gr.RemoteUnreachable, float, int], None]


@dataclass(frozen=True)
class RemoteWhere:
    """Where ``main`` is, here and on the remote, as the pane's header and ``stats`` say."""

    remote: str
    branch: str
    url: str | None
    local_tip: str | None
    remote_tip: str | None  # as last fetched
    ahead: int | None  # local commits the remote has not
    behind: int | None  # remote commits the local main has not
    fetched_at: float | None  # epoch seconds of the last fetch (any, not only ours)
    last_error: str | None  # the last fetch or push that could not reach it
    error_at: str | None
    races: int  # pushes refused because the remote had moved
    unreachable_waits: int

    def to_json(self, now: float) -> dict[str, Any]:
        age = None if self.fetched_at is None else round(max(0.0, now - self.fetched_at), 1)
        return {**self.__dict__, "fetch_age_seconds": age}

    def words(self, now: float) -> str:
        """``origin/main 847996d · local 2 ahead 1 behind · fetched 3m00s ago · 1 race``."""
        tip = self.remote_tip[:7] if self.remote_tip else "not fetched"
        parts = [f"{self.remote}/{self.branch} {tip}"]
        if self.local_tip is None:
            parts.append(f"no local {self.branch}")
        elif self.ahead is None or self.behind is None:
            parts.append(f"local {self.local_tip[:7]}")
        elif self.ahead == self.behind == 0:
            parts.append("local even")
        else:
            counts = [f"{n} {word}" for n, word in ((self.ahead, "ahead"), (self.behind, "behind"))]
            parts.append("local " + " ".join(c for c in counts if not c.startswith("0 ")))
        if self.fetched_at is None:
            parts.append("never fetched")
        else:
            parts.append(f"fetched {format_age(max(0.0, now - self.fetched_at))} ago")
        if self.races:
            parts.append(f"{self.races} race{'s' if self.races != 1 else ''}")
        if self.last_error:
            parts.append(f"unreachable: {self.last_error}")
        return " · ".join(parts)


class Remote:
    """One queue's remote: fetch, push, delete a branch, wait while it is away."""

    def __init__(self, queue: QueueFile) -> None:
        settings = queue.settings
        assert settings.remote is not None
        self.queue, self.settings = queue, settings
        self.root = queue.root
        self.name = settings.remote
        self.branch = settings.main_branch
        self.ref = gr.tracking_ref(self.name, self.branch)
        self.local_ref = f"refs/heads/{self.branch}"

    # -- talking to it --------------------------------------------------------------------------

    def fetch(self, branches: list[str] | None = None) -> None:
        """``main`` (and ``branches``) fetched once; the outcome is kept in the file."""
        try:
            wanted = [self.branch, *(branches or [])]
            gr.fetch(self.root, self.name, wanted, timeout=self.settings.remote_timeout)
        except gr.RemoteUnreachable as exc:
            self._note(last_error=exc.reason, error_at=self.queue.now())
            raise
        self._note(last_fetch_at=self.queue.now(), last_error=None, error_at=None)

    def fetch_now(self) -> str | None:
        """``fetch`` for a person (the pane's ``f``): why it failed, or ``None``."""
        try:
            self.fetch()
        except RuneError as exc:
            return exc.message
        return None

    def fetch_branch(self, branch: str) -> str | None:
        """A teammate's ``branch`` fetched; its commit, or ``None`` if the remote has none."""
        try:
            gr.fetch(self.root, self.name, [branch], timeout=self.settings.remote_timeout)
        except gr.NoRemoteBranch:
            return None
        return gw.resolve_commit(self.root, gr.tracking_ref(self.name, branch))

    def push(self, commit: str) -> gr.PushResult:
        """``commit`` pushed to the remote's ``main`` as a fast-forward (never forced)."""
        timeout = self.settings.remote_timeout
        return gr.push(self.root, self.name, commit, self.branch, timeout=timeout)

    def count_race(self) -> None:
        """A push lost to someone else's: counted (``stats``: races)."""
        self._note(bump="races")

    def record_push(self, commit: str) -> None:
        """After a push: the tracking ref at ``commit`` (a fetch would say the same), unless
        a fetch since shows the remote further on."""
        current = gw.resolve_commit(self.root, self.ref)
        if current is None or gw.is_ancestor(self.root, current, commit):
            gw.set_ref(self.root, self.ref, commit)

    def delete_branch(self, branch: str, expected: str) -> str:
        """``branch`` deleted on the remote if it still holds ``expected``; a note."""
        try:
            result = gr.delete_branch(
                self.root, self.name, branch, expected, timeout=self.settings.remote_timeout
            )
        except RuneError as exc:
            return f"{self.name}/{branch} not deleted: {exc.message}"
        if result.kind == gr.PUSHED:
            return f"deleted {self.name}/{branch}"
        return f"{self.name}/{branch} not deleted ({result.detail}): it moved since it was tested"

    def waiting(self, action: Callable[[], T], on_wait: OnWait) -> T:
        """``action`` until the remote answers: after each ``RemoteUnreachable`` a wait
        (``remote_retry_seconds``, doubling up to ``remote_retry_max_seconds``), said
        through ``on_wait`` first; past ``remote_wait_seconds`` of waiting, the last
        ``RemoteUnreachable`` is raised."""
        settings = self.settings
        deadline = time.monotonic() + settings.remote_wait_seconds
        pause, tries = settings.remote_retry_seconds, 0
        while True:
            try:
                return action()
            except gr.RemoteUnreachable as exc:
                tries += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
                pause_now = min(pause, left)
                self._note(bump="unreachable_waits")
                on_wait(exc, pause_now, tries)
                self.queue.flush()  # the entries' wait, shown before it starts
                time.sleep(pause_now)
                pause = min(pause * 2, settings.remote_retry_max_seconds)

    # -- the local main following ---------------------------------------------------------------

    def follow(self, tip: str) -> list[str]:
        """The local ``main`` (and its checkout) brought to ``tip``, now on the remote,
        when that is a fast-forward its checkout allows; otherwise left, with a note."""
        local = gw.resolve_commit(self.root, self.local_ref)
        if local == tip:
            return []
        where = f"{self.name}/{self.branch}"
        if local is None:
            gw.compare_and_swap(self.root, self.local_ref, tip, "")
            return []
        if not gw.is_ancestor(self.root, local, tip):
            ahead = gr.counts(self.root, local, tip)
            mine = f"{ahead[0]} commit(s)" if ahead else "commits"
            return [f"local {self.branch} has {mine} not on {where}; left as it is"]
        holder = gw.checked_out_at(self.root, self.branch)
        if holder is not None:
            complaint = gw.fast_forward_checkout(holder, local, tip, dry_run=True)
            if complaint is not None:
                return [
                    f"local {self.branch} left behind {where}: its checkout in {holder} "
                    f"has local changes ({complaint}); `git pull` there when ready"
                ]
        if not gw.compare_and_swap(self.root, self.local_ref, tip, local):
            return [f"local {self.branch} moved meanwhile; left as it is"]
        if holder is not None:
            complaint = gw.fast_forward_checkout(holder, local, tip)
            if complaint is not None:
                return [f"{holder} not fast-forwarded: {complaint}"]
        return []

    # -- what the pane and stats show -----------------------------------------------------------

    def where(self) -> RemoteWhere:
        """Local and remote tips, ahead/behind, the last fetch: git's refs, no network."""
        state = self.queue.read().data.get(REMOTE_STATE)
        kept = state if isinstance(state, dict) else {}
        local = gw.resolve_commit(self.root, self.local_ref)
        remote = gw.resolve_commit(self.root, self.ref)
        ahead_behind = gr.counts(self.root, local, remote) if local and remote else None
        return RemoteWhere(
            remote=self.name,
            branch=self.branch,
            url=gr.remote_url(self.root, self.name),
            local_tip=local,
            remote_tip=remote,
            ahead=ahead_behind[0] if ahead_behind else None,
            behind=ahead_behind[1] if ahead_behind else None,
            fetched_at=self._fetched_at(kept),
            last_error=_text(kept.get("last_error")),
            error_at=_text(kept.get("error_at")),
            races=_int(kept.get("races")),
            unreachable_waits=_int(kept.get("unreachable_waits")),
        )

    @staticmethod
    def _fetched_at(kept: dict[str, Any]) -> float | None:
        """When the queue last fetched the remote's main (its own fetch, the queue's clock:
        a fetch by hand, of any ref, is not one of the queue's)."""
        ours = parse_iso(kept.get("last_fetch_at"))
        return None if ours is None else ours.timestamp()

    def _note(self, bump: str | None = None, **fields: Any) -> None:
        """Fields of ``remote`` in the queue's file changed now, one by one under its
        lock (a console's fetch and a processor's never undo each other); ``bump``: a
        count to add one to."""
        self.queue.note_remote({"name": self.name, "branch": self.branch, **fields}, bump)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
