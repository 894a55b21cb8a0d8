"""The signals an entry's outcome owes (``MERGE_COMPLETE``, ``MERGE_FAILED``,
``MERGE_CONFLICT``), addressed to whoever asked: the sender of its ``MERGE_READY``, else
the role of its identity, else the sender of a ``MERGE_READY`` for its branch still in the
signals directory, else the guardian. They come from the ``guardian``, the harness's layer
that merges, and carry the payload the harness documents (``{node_id, branch, entry_id}``,
``{node_id, branch, error}``) with ours beside it.

An outcome is recorded with the signals it owes (``signals_pending``) before any is sent,
so a processor killed in between leaves them for recovery to send; a ``delivery_id``
(entry, attempt, type) tells recovery which had already gone out.
"""

from __future__ import annotations

import contextlib
from typing import Any

from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import InvalidInput, UnreadableFile
from runeconsole.core.files import read_json_object
from runeconsole.core.validate import name_or_none
from runeconsole.services.merge_queue.queue_file import QueueFile
from runeconsole.services.signal_parties import GUARDIAN, party

SIGNAL_SOURCE = GUARDIAN  # the harness's merging layer, which runeconsole stands in for
FALLBACK_TARGET = GUARDIAN


class Outbox:
    def __init__(self, queue: QueueFile) -> None:
        self.queue = queue
        self.signals = queue.signals

    def target(self, entry: dict[str, Any]) -> str:
        """Whoever asked for the merge (see the module's doc), as a harness party name."""
        return (
            party(entry.get("requested_by"))
            or self._identity_role(entry.get("identity_name"))
            or self._ready_sender(entry.get("branch"))
            or FALLBACK_TARGET
        )

    def _identity_role(self, identity: Any) -> str | None:
        """The role in the identity's file, else the key's ``{role}-`` part."""
        key = name_or_none(identity)
        if key is None:
            return None
        with contextlib.suppress(UnreadableFile):
            role = party(read_json_object(self.queue.paths.identities / f"{key}.json").get("role"))
            if role:
                return role
        return party(key.partition("-")[0])

    def _ready_sender(self, branch: Any) -> str | None:
        """Who sent a ``MERGE_READY`` for ``branch`` (to the guardian, say) that is still in
        the signals directory, consumed or not: the runner waiting for the answer."""
        if not isinstance(branch, str) or not branch:
            return None
        found = [
            *self.signals.pending(signal_type="MERGE_READY"),
            *self.signals.processed(signal_type="MERGE_READY"),
        ]
        senders = [party(s.source) for s in found if s.payload.get("branch") == branch]
        return next((s for s in reversed(senders) if s), None)

    @staticmethod
    def payload(entry: dict[str, Any], **extra: Any) -> dict[str, Any]:
        keys = ("entry_id", "node_id", "branch", "identity_name", "bead_id", "pr_number")
        return {**{k: entry.get(k) for k in keys}, **extra}

    def outgoing(self, entry: dict[str, Any], kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """A signal to send, as recorded in the entry's ``signals_pending`` until it is sent.

        ``delivery_id`` (entry, attempt, type) lets recovery tell whether a processor
        that died after recording it had already sent it.
        """
        attempt = entry.get("attempts")
        delivery = f"{entry['entry_id']}.{attempt if isinstance(attempt, int) else 0}.{kind}"
        return {
            "signal_type": kind,
            "target": self.target(entry),
            "payload": {**payload, "delivery_id": delivery},
        }

    def deliver(
        self, entry_id: str, outgoing: list[dict[str, Any]], *, unless_sent: bool = False
    ) -> list[str]:
        """Send the signals an entry's outcome owes, then clear its ``signals_pending``.

        The outcome is recorded with its signals first, so a processor killed before
        sending them leaves them for recovery to send (``unless_sent``: skip any
        that did go out just before the kill). Returns the types sent.
        """
        return self.deliver_all({entry_id: outgoing}, unless_sent=unless_sent)[entry_id]

    def deliver_all(
        self, owed: dict[str, list[dict[str, Any]]], *, unless_sent: bool = False
    ) -> dict[str, list[str]]:
        """``deliver`` for several entries (a batch that landed), cleared in one write."""
        pause_point("merge-queue-signals-due")
        sent: dict[str, list[str]] = {}
        for entry_id, outgoing in owed.items():
            sent[entry_id] = []
            for item in outgoing:
                kind, target, payload = _signal_parts(item)
                if kind is None or (unless_sent and self._was_sent(kind, target, payload)):
                    continue
                self._send(kind, target, payload)
                sent[entry_id].append(kind)
        self.queue.update_entries({entry_id: {"signals_pending": []} for entry_id in owed})
        return sent

    def _was_sent(self, kind: str, target: str, payload: dict[str, Any]) -> bool:
        delivery = payload.get("delivery_id")
        found = [
            *self.signals.pending(signal_type=kind, target=target),
            *self.signals.processed(signal_type=kind, target=target),
        ]
        return any(signal.payload.get("delivery_id") == delivery for signal in found)

    def _send(self, signal_type: str, target: str, payload: dict[str, Any]) -> None:
        with contextlib.suppress(InvalidInput):
            self.signals.send(signal_type, SIGNAL_SOURCE, target, payload)


def _signal_parts(item: Any) -> tuple[str | None, str, dict[str, Any]]:
    """(type, target, payload) of a ``signals_pending`` item; type ``None`` if malformed."""
    if not isinstance(item, dict):
        return None, "", {}
    kind, target, payload = item.get("signal_type"), item.get("target"), item.get("payload")
    if not (isinstance(kind, str) and isinstance(target, str) and isinstance(payload, dict)):
        return None, "", {}
    return kind, target, payload
