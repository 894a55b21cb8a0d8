"""Permission requests as the console and the CLI see them, decided by the operator.

A request as read (``PermissionRequest``) is the hook's request file, its decision if
any, and what they say together (``state``, ``outcome``, ``decided_by``); ``Verdict`` is
how the operator decides one. ``Permissions`` lists the requests (open ones waiting for
a decision, decided ones as the record of who decided), decides one, and keeps the
operator's rules. A decision is one exclusive create under the request's lock, after
reading it again: a request decided meanwhile (by the timeout, the console, the CLI)
refuses the second decision with the one that stands (``AlreadyDecided``); a request
whose hook is gone (the agent stopped waiting) is refused (``Gone``) and recorded as
decided by nobody. A file that cannot be read is listed as unreadable with the reason,
never raised past the listing.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.crash_points import pause_point
from runeconsole.core.dir_cache import DirCache
from runeconsole.core.errors import InvalidInput, RuneError, WriteFailed
from runeconsole.core.locks import locked
from runeconsole.core.pids import pid_alive
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.permissions import rules as permission_rules
from runeconsole.services.claude.permissions.rules import Rule
from runeconsole.services.journal import journaled
from runeconsole.services.project import Project

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


# -- listed and decided ------------------------------------------------------------------------


def _deciding(request: PermissionRequest, behavior: str) -> str:
    """``allowing perm-… (claude-web-1: Bash npm test)``: the action, as the journal says it."""
    verb = "allowing" if behavior == files.ALLOW else "denying"
    subject = " ".join(request.subject.split())[:60]
    return f"{verb} {request.id} ({request.agent}: {request.tool} {subject})"


RECENT = 20  # decisions shown below the open requests (the console's pane, the stream)


class Permissions:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.paths = project.paths
        self.clock = project.clock
        self._listed: DirCache[tuple[list[str], list[str]]] = DirCache()

    @property
    def directory(self) -> Path:
        return files.directory(self.paths)

    def request_files(self) -> list[Path]:
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        return [
            self.directory / name
            for name in names
            if name.endswith(files.REQUEST) and files.valid_id(name[: -len(files.REQUEST)])
        ]

    def requests(self) -> list[PermissionRequest]:
        """Every request, oldest first."""
        return sorted(
            (PermissionRequest.read(p) for p in self.request_files()),
            key=PermissionRequest.sort_key,
        )

    def shown(self) -> list[PermissionRequest]:
        """The open requests and the ``RECENT`` latest decided ones, oldest first.

        Only those are read: a request with a ``.decision`` beside it is decided (its name
        says so), and ids sort by the moment they were asked, so a directory of 100,000
        decisions costs one listing, not 100,000 reads (the console's pane and rescan, the
        ``events`` stream)."""
        undecided, latest = self._listing()
        ids_read = [*undecided, *latest]
        requests = sorted(
            (PermissionRequest.read(self.directory / f"{i}{files.REQUEST}") for i in ids_read),
            key=PermissionRequest.sort_key,
        )
        decided = [r for r in requests if not r.open][-RECENT:]
        return [r for r in requests if r.open or r in decided]

    def _listing(self) -> tuple[list[str], list[str]]:
        """The undecided requests' ids and the ``RECENT`` latest decided ones', from one
        listing of the directory, kept while it is unchanged (``core/dir_cache.py``: a
        rescan of a directory of 100,000 decisions costs a ``stat``)."""
        directory = self.directory
        return self._listed.get(directory, lambda: files.listing(directory, RECENT), ([], []))

    def pending(self) -> list[PermissionRequest]:
        return [r for r in self.shown() if r.open]

    def history(self, agent: str | None = None) -> list[PermissionRequest]:
        """Decided (and unreadable) requests, oldest first; one agent's when named."""
        return [r for r in self.requests() if not r.open and (agent is None or r.agent == agent)]

    def get(self, request_id: str) -> PermissionRequest:
        try:
            path = files.request_path(self.paths, request_id)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        if not os.path.lexists(path):
            raise RuneError(f"no permission request {request_id} (runeconsole permissions pending)")
        return PermissionRequest.read(path)

    def decide(
        self,
        request_id: str,
        behavior: str,
        *,
        message: str | None = None,
        via: str = "console",
        rule: str | None = None,
    ) -> PermissionRequest:
        """The operator's decision, recorded (``AlreadyDecided``, ``Gone`` when too late)."""
        if behavior not in (files.ALLOW, files.DENY):
            raise InvalidInput(f"a permission is allowed or denied, not {behavior!r}")
        if message is not None and behavior == files.ALLOW:
            raise InvalidInput("a message goes with a deny (the model reads it)")
        request = self.get(request_id)
        decision = files.decision_path(request.path)
        with journaled(self.project, "decide", _deciding(request, behavior), [decision]):
            return self._decide(request, behavior, message=message, via=via, rule=rule)

    def _decide(
        self,
        request: PermissionRequest,
        behavior: str,
        *,
        message: str | None,
        via: str,
        rule: str | None,
    ) -> PermissionRequest:
        with locked(self.paths.lock_for(files.lock_name(request.id)), what=request.id):
            fresh = PermissionRequest.read(request.path)
            if fresh.error is not None:
                raise RuneError(f"{request.id}: unreadable: {fresh.error}")
            if not fresh.open:
                raise AlreadyDecided(fresh)
            if not self._hook_alive(fresh):
                self._nobody(fresh, HOOK_GONE)
                raise Gone(f"{request.id}: too late: {HOOK_GONE}")
            fields = files.decision_fields(
                request.id,
                behavior,
                files.OPERATOR,
                message=message.strip() if message and message.strip() else None,
                via=via,
                rule=rule,
                now=self.clock.now(),
            )
            files.write_decision(request.path, fields)
        return PermissionRequest.read(request.path)

    def decide_always(
        self, request: PermissionRequest, behavior: str, *, every_agent: bool, via: str = "console"
    ) -> tuple[Rule, PermissionRequest]:
        """This request decided, then a standing rule for this exact tool and subject (the
        decision names it). A request too late to decide (decided already, its agent gone)
        makes no rule."""
        if request.fields.get("subject_truncated") is not False:
            raise InvalidInput(
                f"{request.id}: its command or path is not recorded whole (too long, or an "
                "older file): decide it once, no rule can be made from it"
            )
        agent = None if every_agent else request.agent
        made = permission_rules.rule_id(behavior, request.tool, request.subject, agent)
        written = [files.decision_path(request.path), permission_rules.rules_path(self.paths)]
        what = f"{_deciding(request, behavior)} always, with a rule for {agent or 'all agents'}"
        with journaled(self.project, "decide-always", what, written):
            decided = self._decide(request, behavior, message=None, via=via, rule=made)
            pause_point("decide-before-rule")
            return self._rule_after(decided, behavior, agent)

    def _rule_after(
        self, decided: PermissionRequest, behavior: str, agent: str | None
    ) -> tuple[Rule, PermissionRequest]:
        """The rule of a request just decided (a full disk: which of the two stands)."""
        try:
            return self._add_rule(behavior, decided.tool, decided.subject, agent), decided
        except WriteFailed as exc:
            command = f"runeconsole permissions {behavior} {decided.tool} {decided.subject!r}"
            scope = "" if agent is None else f" --agent {agent}"
            raise RuneError(
                f"{decided.id} is {decided.state} once, but the rule was not saved: "
                f"{exc.message}; then `{command}{scope}`"
            ) from None

    def apply(
        self, request: PermissionRequest, verdict: Verdict, *, via: str = "console"
    ) -> PermissionRequest:
        """``verdict`` on ``request``: decided once, or ``always`` with a standing rule; the
        request as decided (``AlreadyDecided``, ``Gone`` and ``InvalidInput`` as above)."""
        if verdict.always:
            every = verdict.every_agent
            return self.decide_always(request, verdict.behavior, every_agent=every, via=via)[1]
        return self.decide(request.id, verdict.behavior, message=verdict.message, via=via)

    def decide_and_report(
        self,
        request_id: str,
        behavior: str,
        *,
        message: str | None = None,
        always: bool = False,
        every_agent: bool = False,
        via: str = "console",
    ) -> dict[str, Any]:
        """Decide a request once (``message``: a deny's reason) or ``always`` (and a
        standing rule, for ``every_agent`` or the request's); the report: the request as
        decided, with ``rule`` when one was made."""
        if not always:
            return self.decide(request_id, behavior, message=message, via=via).to_json()
        rule, decided = self.decide_always(
            self.get(request_id), behavior, every_agent=every_agent, via=via
        )
        return {**decided.to_json(), "rule": rule.to_json()}

    @staticmethod
    def _hook_alive(request: PermissionRequest) -> bool:
        pid = request.fields.get("hook_pid")
        return not isinstance(pid, int) or pid_alive(pid)

    def _nobody(self, request: PermissionRequest, reason: str) -> None:
        fields = files.decision_fields(request.id, None, files.NOBODY, reason=reason)
        with contextlib.suppress(FileExistsError):  # decided at that moment: that one stands
            files.write_decision(request.path, fields)

    def expire_orphans(self, requests: list[PermissionRequest]) -> list[str]:
        """Open requests whose hook is gone are recorded as decided by nobody."""
        gone = []
        for request in requests:
            if not request.open or self._hook_alive(request):
                continue
            with locked(self.paths.lock_for(files.lock_name(request.id)), what=request.id):
                fresh = PermissionRequest.read(request.path)
                if fresh.open:
                    self._nobody(fresh, HOOK_GONE)
                    gone.append(request.id)
        return gone

    # -- the operator's rules ----------------------------------------------------------------

    def rules(self) -> list[Rule]:
        return permission_rules.read(self.paths)

    def add_rule(self, behavior: str, tool: str, subject: str, agent: str | None) -> Rule:
        what = f"adding the rule {behavior} {tool} {subject[:60]!r} for {agent or 'all agents'}"
        with journaled(self.project, "rule", what, [permission_rules.rules_path(self.paths)]):
            return self._add_rule(behavior, tool, subject, agent)

    def _add_rule(self, behavior: str, tool: str, subject: str, agent: str | None) -> Rule:
        return permission_rules.add(self.paths, behavior, tool, subject, agent, self.clock.now())

    def remove_rule(self, rule_id: str) -> Rule:
        what = f"taking out the rule {rule_id}"
        with journaled(self.project, "rule", what, [permission_rules.rules_path(self.paths)]):
            return permission_rules.remove(self.paths, rule_id)
