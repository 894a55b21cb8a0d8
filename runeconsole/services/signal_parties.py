"""How runeconsole's signals read to the claude-code-harness, which shares the signals
directory: who a signal is from (a layer or role name, as the harness names its parties:
``runner``, ``guardian``, the agent's role) and the payload fields its own writers fill,
beside the ones we add."""

from __future__ import annotations

from runeconsole.core.validate import ID_PATTERN, MAX_ID_LENGTH

TYPE_CHECKING = False  # typing itself is not imported: Claude Code's hook signals too
if TYPE_CHECKING:
    from typing import Any

RUNNER, GUARDIAN = "runner", "guardian"
# The fields the harness's writers put in each agent lifecycle signal, beyond
# ``agent_id``, ``role`` and ``name``.
HARNESS_AGENT_FIELDS = {
    "AGENT_REGISTERED": ("session_id", "worktree"),
    "AGENT_CRASHED": ("crashed_at",),
    "AGENT_TERMINATED": ("terminated_at",),
}
OUR_AGENT_FIELDS = ("status", "tmux_session", "predecessor_id")


def party(value: Any) -> str | None:
    """``value`` if it can name a signal's source or target, else ``None``."""
    ok = isinstance(value, str) and len(value) <= MAX_ID_LENGTH and ID_PATTERN.fullmatch(value)
    return value if ok else None


def role_of(fields: dict[str, Any]) -> str:
    """An agent's role as the source of the signals about it (the harness's layers send
    from their role); the runner, which watches agents, when the role cannot name one."""
    return party(fields.get("role")) or RUNNER


def agent_payload(
    signal_type: str, key: str, fields: dict[str, Any], reason: str | None = None
) -> dict[str, Any]:
    """The payload of an ``AGENT_*`` signal: the harness's fields first, then ours."""
    payload = {name: fields.get(name) for name in ("agent_id", "role", "name")}
    for name in HARNESS_AGENT_FIELDS.get(signal_type, ()):
        payload[name] = fields.get(name)
    payload["key"] = key
    payload.update({name: fields.get(name) for name in OUR_AGENT_FIELDS})
    if reason:
        payload["reason"] = reason
    return payload
