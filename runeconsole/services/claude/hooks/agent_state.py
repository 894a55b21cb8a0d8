"""What a hook event changes in the agent's identity file, written the way the registry writes.

The identity (``.claude/state/identities/{key}.json``) gains ``activity``,
``waiting_for``, ``context_left_percent`` and ``tokens`` beside the fields every other
writer keeps, and a ``claude`` object with the session, its transcript and where the
last read of it stopped. Each event is one read and at most one write under the
identity's own lock (the registry's lock file) with an atomic replace; registering the
agent at its session's start and terminating it at the end are made in that same write,
with the registry's own field functions (``identity_fields``). Writes are throttled: an
event that changes nothing visible rewrites the file only to refresh ``last_seen``, at
most once a second.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime

from runeconsole.adapters.transcript import Usage, read_on
from runeconsole.core.files import atomic_write_json, parse_json_object, read_bytes
from runeconsole.core.locks import flocked
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.bridge import payload as events
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.hooks import terminal
from runeconsole.services.claude.session import activity, session_facts
from runeconsole.services.identity_fields import ACTIVE

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

THROTTLE_SECONDS = 1.0
LAST_MESSAGE = "last_assistant_message"  # in ``claude``: what the Stop event said last
LAST_MESSAGE_CHARS = 4000
VISIBLE = (
    "activity",
    "waiting_for",
    "context_left_percent",
    "tokens",
    "session_id",
    *session_facts.VISIBLE,
    "cost",
)


class Outcome:
    """What ``record`` did: the identity as written (or found) and whether it wrote."""

    __slots__ = ("fields", "key", "wrote")

    def __init__(self, key: str, fields: dict[str, Any] | None, wrote: bool) -> None:
        self.key, self.fields, self.wrote = key, fields, wrote


def read_identity(path: str) -> dict[str, Any] | None:
    """The identity's fields, ``None`` when there is none (``UnreadableFile`` when bad)."""
    if not os.path.lexists(path):
        return None
    return parse_json_object(path, read_bytes(path, follow_symlinks=False))


def record(
    paths: ProjectPaths,
    role: str,
    name: str,
    payload: HookPayload,
    now: datetime,
    environ: Mapping[str, str] | None = None,
    where: tuple[str, str] | None = None,
) -> Outcome:
    """Apply the event to the agent's identity: one read and at most one write, under its
    lock. A session seen for the first time (or starting again after its identity ended)
    registers its agent in that write, and a SessionEnd that ends the session terminates
    it there; each is then signalled (``AGENT_REGISTERED``, ``AGENT_TERMINATED``).
    ``environ``: the hook's, default this process's (it says whether the session runs in
    the background); ``where``: the session's tmux pane and socket,
    ``terminal.from_environ``."""
    key = f"{role}-{name}"
    with flocked(os.fspath(paths.lock_for(f"identity-{key}")), what=f"agent {key}"):
        found = read_identity(os.fspath(paths.identities / f"{key}.json"))
        if found is not None and found.get("status") == ACTIVE:
            fields, begun = found, False
        elif _registers(payload, found):
            # lifecycle: imported by a session's start and its end alone
            from runeconsole.services.claude.hooks import lifecycle

            fields, begun = lifecycle.registered(paths, role, name, payload, found, now), True
        else:
            return Outcome(key, found, False)
        written_at = _written_at(fields)
        changed = _apply(
            paths, fields, payload, now, os.environ if environ is None else environ, key, where
        )
        ended = activity.ends_session(payload)
        if ended:
            from runeconsole.services.claude.hooks import lifecycle

            ended = lifecycle.terminated(key, fields, payload, now)
        quiet = not (begun or changed or ended)
        if quiet and 0 <= now.timestamp() - written_at < THROTTLE_SECONDS:
            return Outcome(key, fields, False)
        fields["last_seen"] = fields["last_heartbeat"] = iso_z(now)
        fields["claude"]["written_at"] = now.timestamp()  # last_seen keeps whole seconds
        atomic_write_json(paths.inside(paths.identities / f"{key}.json"), fields)
    if begun or ended:  # (lifecycle imported above, for either)
        lifecycle.announce_change(paths, key, fields, payload, now, registered=begun)
    return Outcome(key, fields, True)


def _registers(payload: HookPayload, fields: dict[str, Any] | None) -> bool:
    """Whether an event of an agent that is not active registers it: the first event of a
    session never seen does, and so does a new start after its identity ended; any other
    event of an ended agent changes nothing (nor does a SessionEnd, ever)."""
    if payload.event == events.SESSION_END:
        return False
    return fields is None or payload.event == events.SESSION_START


def _written_at(fields: dict[str, Any]) -> float:
    """When the hook last wrote the identity (epoch seconds; -inf if it never did)."""
    claude = fields.get("claude")
    moment = claude.get("written_at") if isinstance(claude, dict) else None
    if isinstance(moment, int | float) and not isinstance(moment, bool):
        return float(moment)
    return float("-inf")


def _remember_terminal(claude: dict[str, Any], event: str, where: tuple[str, str] | None) -> bool:
    """The session's pane, recorded at its start (or when first seen, for a session whose
    start was missed); dropped at a start outside tmux. True when the record changed."""
    before = claude.get(terminal.FIELD)
    if where is None:
        if event == events.SESSION_START:
            claude.pop(terminal.FIELD, None)
    elif (
        event == events.SESSION_START
        or not isinstance(before, dict)
        or (before.get("pane"), before.get("socket")) != where
    ):
        claude[terminal.FIELD] = terminal.describe(*where)
    return claude.get(terminal.FIELD) != before


def _apply(
    paths: ProjectPaths,
    fields: dict[str, Any],
    payload: HookPayload,
    now: datetime,
    environ: Mapping[str, str],
    key: str,
    where: tuple[str, str] | None = None,
) -> bool:
    """Change ``fields`` for the event; True when something visible changed."""
    before = {name: fields.get(name) for name in VISIBLE}
    claude = fields.get("claude")
    claude = dict(claude) if isinstance(claude, dict) else {}
    moved = _remember_terminal(claude, payload.event, where)
    session = payload.session_id
    new_session = session is not None and session != claude.get("session_id")
    usage = (
        Usage() if new_session else Usage.from_json(claude.get("transcript"), fields.get("tokens"))
    )
    if new_session:
        fields["session_id"] = session
        fields.pop("tokens", None)
        fields.pop("context_left_percent", None)
    for name in ("session_id", "transcript_path", "cwd"):
        value = payload.text(name)
        if value is not None:
            claude[name] = value
    claude["last_event"] = payload.event
    claude["last_event_at"] = iso_z(now)
    if payload.event == events.PRE_COMPACT:
        claude["compact_trigger"] = payload.text("trigger")
    if payload.event == events.SESSION_START and payload.text("model"):
        claude["model"] = payload.text("model")
    said = payload.text(LAST_MESSAGE) if payload.event == events.STOP else None
    if said:  # kept for `peek` (its transcript is written behind the events)
        moved = True
        claude[LAST_MESSAGE] = said[:LAST_MESSAGE_CHARS]
        claude[LAST_MESSAGE + "_at"] = iso_z(now)
    transcript = claude.get("transcript_path")
    if isinstance(transcript, str) and os.path.isabs(transcript):
        offset = usage.offset
        usage = read_on(transcript, usage)
        fields["tokens"] = dict(usage.tokens)
        if usage.context_tokens is not None or usage.offset != offset:
            from runeconsole.services.claude.session import meter

            meter.from_transcript(meter.Entry(paths, key, fields, claude), usage, now)
        claude["transcript"] = usage.to_json()
    session_facts.apply(fields, claude, payload, claude["last_event_at"], environ, new_session)
    state = activity.transition(payload, claude.get("compact_trigger"), fields.get("activity"))
    if state is not None:
        fields["activity"], fields["waiting_for"] = state
    fields["claude"] = claude
    return moved or any(fields.get(name) != before[name] for name in VISIBLE)
