"""A permission request as read: the hook's request file, its decision if any, and what
they say together (``outcome``, ``decided_by``); ``Verdict``, how the operator decides
one; the refusals a decision can meet. ``Permissions`` (``permissions.py``) lists and
decides them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.claude import permission_files as files

PENDING, UNDECIDED, ALLOWED, DENIED, ASKED, UNREADABLE = (
    "pending",
    "undecided",
    "allowed",
    "denied",
    "asked in Claude Code",
    "unreadable",
)
HOOK_GONE = "the agent stopped waiting (its hook is gone); Claude Code asked in its own dialog"


@dataclass(frozen=True)
class Verdict:
    """How the operator decides a permission request."""

    behavior: str  # allow or deny
    message: str | None = None  # with a single deny: the reason the model is told
    always: bool = False  # also a standing rule for this exact tool and command or path
    every_agent: bool = False  # the rule's scope: all agents, not only the request's


class AlreadyDecided(RuneError):
    def __init__(self, request: PermissionRequest) -> None:
        super().__init__(f"{request.id} is already decided: {request.outcome}")
        self.request = request


class Gone(RuneError):
    """Nobody waits for this decision any more (Claude Code asked in its own dialog)."""


def _text(fields: dict[str, Any], name: str) -> str:
    value = fields.get(name)
    return value if isinstance(value, str) else ""


class PermissionRequest:
    """One request and its decision, as read (``error`` says why it cannot be used)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.id = path.name[: -len(files.REQUEST)]
        self.fields: dict[str, Any] = {}
        self.error: str | None = None
        self.decision: dict[str, Any] | None = None
        self.decision_error: str | None = None

    @classmethod
    def read(cls, path: Path) -> PermissionRequest:
        request = cls(path)
        try:
            request.fields = files.read_object(path)
        except RuneError as exc:
            request.error = getattr(exc, "reason", None) or exc.message
        answer = files.decision_path(path)
        if os.path.lexists(answer):
            try:
                request.decision = files.read_object(answer)
            except RuneError as exc:
                request.decision_error = getattr(exc, "reason", None) or exc.message
        return request

    @property
    def agent(self) -> str:
        return _text(self.fields, "agent") or "?"

    @property
    def tool(self) -> str:
        return _text(self.fields, "tool_name") or "?"

    @property
    def subject(self) -> str:
        return _text(self.fields, "subject")

    @property
    def asked(self) -> datetime | None:
        return parse_iso(self.fields.get("asked_at"))

    @property
    def expires(self) -> datetime | None:
        return parse_iso(self.fields.get("expires_at"))

    @property
    def open(self) -> bool:
        """Waiting for the operator (a request nobody waits for is never open)."""
        return (
            self.error is None
            and self.decision is None
            and self.decision_error is None
            and self.expires is not None
        )

    @property
    def state(self) -> str:
        if self.error is not None:
            return UNREADABLE
        if self.decision_error is not None:
            return UNREADABLE
        if self.decision is None:
            return PENDING if self.open else UNDECIDED
        behavior = self.decision.get("behavior")
        said = behavior if isinstance(behavior, str) else ""
        return {files.ALLOW: ALLOWED, files.DENY: DENIED}.get(said, ASKED)

    @property
    def decided_by(self) -> str:
        by = (self.decision or {}).get("decided_by")
        return by if by in files.DECIDERS else "?"

    @property
    def outcome(self) -> str:
        """The decision in words: ``denied by operator: not on main``."""
        if self.error is not None:
            return f"unreadable: {self.error}"
        if self.decision_error is not None:
            return f"decision unreadable: {self.decision_error}"
        if self.decision is None:
            return PENDING if self.open else "no decision recorded"
        decision = self.decision
        if self.state == ASKED:
            return f"fell through to Claude Code: {_text(decision, 'reason') or 'nobody decided'}"
        said = _text(decision, "message")
        rule = _text(decision, "rule")
        by = f"rule {rule}" if self.decided_by == files.RULE and rule else self.decided_by
        return f"{self.state} by {by}" + (
            f": {said}" if said and self.decided_by != files.RULE else ""
        )

    def sort_key(self) -> tuple[float, str]:
        asked = self.asked
        return (asked.timestamp() if asked else 0.0, self.id)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "agent": self.fields.get("agent"),
            "tool": self.fields.get("tool_name"),
            "subject": self.fields.get("subject"),
            "description": self.fields.get("description"),
            "diff_summary": self.fields.get("diff_summary"),
            "suggestions": self.fields.get("suggestions"),
            "asked_at": self.fields.get("asked_at"),
            "expires_at": self.fields.get("expires_at"),
            "decision": self.decision,
            "outcome": self.outcome,
            "error": self.error or self.decision_error,
            "decision_error": self.decision_error,
            "path": str(self.path),
            "fields": self.fields,  # the request as read: a reader elsewhere sees what we see
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PermissionRequest:
        """A request as ``to_json`` wrote it (a row of another source's stream). A row from
        an older source, without the request's fields, is read from the row's own; anything
        of another shape reads as missing, never raises."""
        path = data.get("path")
        request = cls(Path(path if isinstance(path, str) and path else f"?{files.REQUEST}"))
        ident = data.get("id")
        if isinstance(ident, str) and ident:
            request.id = ident
        fields = data.get("fields")
        if not isinstance(fields, dict):
            fields = {name: data.get(key) for key, name in ROW_FIELDS.items()}
        request.fields = {name: value for name, value in fields.items() if value is not None}
        decision = data.get("decision")
        request.decision = decision if isinstance(decision, dict) else None
        error, decision_error = data.get("error"), data.get("decision_error")
        request.decision_error = decision_error if isinstance(decision_error, str) else None
        if isinstance(error, str) and error != request.decision_error:
            request.error = error
        return request


# What a row says of its request, when it does not carry the request's fields.
ROW_FIELDS = {
    "agent": "agent",
    "tool": "tool_name",
    "subject": "subject",
    "description": "description",
    "diff_summary": "diff_summary",
    "suggestions": "suggestions",
    "asked_at": "asked_at",
    "expires_at": "expires_at",
}
