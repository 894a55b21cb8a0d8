"""The signals an entry's outcome owes (``MERGE_COMPLETE``, ``MERGE_FAILED``,
``MERGE_CONFLICT``), sent to the entry's identity or else the guardian.

An outcome is recorded with the signals it owes (``signals_pending``) before any is sent,
so a processor killed in between leaves them for recovery to send; a ``delivery_id``
(entry, attempt, type) tells recovery which had already gone out.
"""

from __future__ import annotations

import contextlib
from typing import Any

from runeconsole.core.errors import InvalidInput
from runeconsole.core.pause import pause_point
from runeconsole.services.merge_queue.model import id_or_none
from runeconsole.services.merge_queue.queue_file import QueueFile

SIGNAL_SOURCE = "runeconsole"
FALLBACK_TARGET = "guardian"


class Outbox:
    def __init__(self, queue: QueueFile) -> None:
        self.queue = queue
        self.signals = queue.signals

    @staticmethod
    def target(entry: dict[str, Any]) -> str:
        """The entry's identity when it can name a signal file, else the guardian."""
        return id_or_none(entry.get("identity_name")) or FALLBACK_TARGET

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
        pause_point("merge-queue-signals-due")
        sent = []
        for item in outgoing:
            kind, target, payload = _signal_parts(item)
            if kind is None or (unless_sent and self._was_sent(kind, target, payload)):
                continue
            self._send(kind, target, payload)
            sent.append(kind)
        self.queue.update_entry(entry_id, {"signals_pending": []})
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
