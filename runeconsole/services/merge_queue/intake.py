"""``MERGE_READY`` signals turned into queue entries, without taking anyone else's.

The signals directory is shared with the claude-code-harness, whose runner sends
``MERGE_READY`` to the ``guardian`` and whose guardian consumes what is addressed to it.
So runeconsole consumes (moves into ``processed/``) only signals addressed to itself
(target ``runeconsole``). One addressed to the ``guardian`` is acted on only when the
talisman makes runeconsole the guardian's merge processor
(``runeconsole.merge_queue.answer_guardian_signals: true``), and even then it is left
where it is: the queue file remembers the signals it turned into entries
(``signals_acted_on``, while they are still there), so none becomes two entries. Signals
to anyone else are never touched.

Each signal's sender is recorded in its entry (``requested_by``): the outcome is
addressed to it, so a runner waiting with ``wait_for_signal.py --target runner`` returns.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.locks import locked
from runeconsole.core.validate import name_or_none
from runeconsole.services.merge_queue.claims import QueueClaims
from runeconsole.services.merge_queue.model import IN_PROGRESS, PENDING, QueueEntry, QueueState
from runeconsole.services.merge_queue.queue_file import LOCK_TIMEOUT, SIGNALS_ACTED_ON
from runeconsole.services.signal_parties import GUARDIAN, party
from runeconsole.services.signals import Signal

MERGE_READY = "MERGE_READY"
OUR_NAME = "runeconsole"  # the name other tools address runeconsole by


@dataclass(frozen=True)
class MergeRequest:
    """What one ``MERGE_READY`` asks for, and whether the signal is ours to consume."""

    signal: Signal
    branch: str
    consume: bool
    new: bool = True  # False: the branch already waits (the signal is acted on, no entry)

    @property
    def name(self) -> str:
        return self.signal.path.name

    def fields(self) -> dict[str, Any]:
        """``add``'s arguments: ids that could not name a file are dropped, not refused."""
        payload = self.signal.payload
        pr = payload.get("pr_number")
        worktree = payload.get("worktree_path")
        return {
            "identity": name_or_none(payload.get("identity_name") or payload.get("identity")),
            "node_id": name_or_none(payload.get("node_id")),
            "bead_id": party(payload.get("bead_id")),
            "pr_number": pr if isinstance(pr, int) and not isinstance(pr, bool) else None,
            "worktree": worktree if isinstance(worktree, str) and worktree else None,
            "requested_by": party(self.signal.source),
        }

    def preview(self, index: int) -> QueueEntry:
        """The entry it would become (for a dry run): not in the file yet."""
        fields = self.fields()
        entry = {
            "entry_id": None,
            "from_signal": self.name,
            "branch": self.branch,
            "node_id": fields["node_id"],
            "identity_name": fields["identity"],
            "requested_by": fields["requested_by"],
            "status": PENDING,
        }
        return QueueEntry(entry, index)

    def to_json(self) -> dict[str, Any]:
        return {
            "signal": self.name,
            "branch": self.branch,
            "requested_by": party(self.signal.source),
            "consumed": self.consume,
        }


class Intake:
    def __init__(self, queue: QueueClaims) -> None:
        self.queue = queue
        self.signals = queue.signals
        self.answer_guardian = queue.settings.answer_guardian_signals

    def ours(self, signal: Signal) -> bool | None:
        """True: addressed to runeconsole (consume it); False: to the guardian whose merge
        processor runeconsole is (act on it, leave it); ``None``: not for us."""
        if signal.target == OUR_NAME:
            return True
        if signal.target == GUARDIAN and self.answer_guardian:
            return False
        return None

    def requests(self, state: QueueState) -> list[MergeRequest]:
        """The pending ``MERGE_READY`` signals for us not acted on before; ``new`` unless
        their branch already waits."""
        acted = _acted_on(state.data)
        waiting = {e.branch for e in state.entries if e.status in (PENDING, IN_PROGRESS)}
        found: list[MergeRequest] = []
        for signal in self.signals.pending(signal_type=MERGE_READY):
            mine = self.ours(signal)
            branch = signal.payload.get("branch")
            if signal.error or mine is None or signal.path.name in acted:
                continue  # unreadable or not ours: it stays, visible, for its reader
            if not isinstance(branch, str) or not gw.valid_branch_name(branch):
                continue
            found.append(MergeRequest(signal, str(branch), mine, new=branch not in waiting))
            waiting.add(branch)
        return found

    def pick_up(self) -> list[str]:
        """Turn the requests into entries; returns the ids of the entries made. One
        pick-up at a time, so two (the console and a CLI) never make one signal twice."""
        with locked(self.queue.paths.lock_for("merge-queue-intake"), LOCK_TIMEOUT, "intake"):
            added: list[str] = []
            acted: list[str] = []
            for request in self.requests(self.queue.read()):
                if not request.signal.path.exists():
                    continue  # its reader took it meanwhile
                try:
                    entry, created = self.queue.add(
                        request.branch, source=request.name, **request.fields()
                    )
                except InvalidInput:
                    continue
                acted.append(request.name)
                if request.consume:
                    with contextlib.suppress(RuneError):
                        self.signals.consume(request.signal)
                if created:
                    added.append(entry.entry_id)
            present = {s.path.name for s in self.signals.pending(signal_type=MERGE_READY)}
            self.queue.remember_signals(acted, present)
            return added


def _acted_on(data: dict[str, Any]) -> set[str]:
    names = data.get(SIGNALS_ACTED_ON)
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()
