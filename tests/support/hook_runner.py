"""A double of Claude Code's hook runner, for tests that go through the installed command.

Like Claude Code it reads the hooks of the three settings files (the project's
``.claude/settings.local.json``, ``.claude/settings.json``, then the user's
``${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json``), runs every entry whose
``matcher`` matches (identical commands once), each through a shell with the event's
JSON on stdin, ``$CLAUDE_PROJECT_DIR`` set and the entry's ``timeout`` enforced (the
command's whole process group is killed), and reads the result the way Claude Code does:
exit 0 and a JSON object on stdout is a decision, exit 2 blocks, other codes are
non-blocking errors. It is stricter than needed where Claude Code would complain: an
event name in ``hookSpecificOutput`` that is not the event's, a ``permissionDecision``
Claude Code does not know (``defer``), and malformed JSON are errors.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT = 600.0
# The payload field each event's matcher is compared with (others run every entry).
MATCHED_FIELD = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PermissionRequest": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionDenied": "tool_name",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "Elicitation": "mcp_server_name",
    "Notification": "notification_type",
    "SessionStart": "source",
    "PreCompact": "trigger",
    "SessionEnd": "reason",
}
DECISIONS = ("allow", "deny", "ask")
_NAMES = re.compile(r"[A-Za-z0-9_|]+")


def matches(matcher: object, value: object) -> bool:
    if matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str) or not isinstance(value, str):
        return False
    if _NAMES.fullmatch(matcher):
        return value in matcher.split("|")
    try:
        return re.fullmatch(matcher, value) is not None
    except re.error:
        return False


@dataclass
class HookResult:
    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    output: dict[str, Any] | None = None  # the decision, when stdout held one
    errors: list[str] = field(default_factory=list)  # what Claude Code would report

    @property
    def blocked(self) -> bool:
        return self.exit_code == 2


@dataclass
class Decision:
    """PreToolUse: what the hooks decided together (the first ``allow`` with input wins)."""

    permission: str | None = None
    updated_input: dict[str, Any] | None = None


class HookRunner:
    def __init__(self, project: Path, environ: dict[str, str]) -> None:
        self.project = project
        self.environ = dict(environ)

    def settings_files(self) -> list[Path]:
        config = self.environ.get("CLAUDE_CONFIG_DIR")
        user = Path(config) if config else Path(self.environ.get("HOME", "~")) / ".claude"
        claude = self.project / ".claude"
        return [claude / "settings.local.json", claude / "settings.json", user / "settings.json"]

    def entries(self, event: str, payload: dict[str, Any]) -> list[tuple[str, float]]:
        value = payload.get(MATCHED_FIELD.get(event, ""))
        found: list[tuple[str, float]] = []
        for path in self.settings_files():
            if not path.exists():
                continue
            hooks = json.loads(path.read_text(encoding="utf-8")).get("hooks", {})
            for group in hooks.get(event, []):
                if event in MATCHED_FIELD and not matches(group.get("matcher"), value):
                    continue
                for hook in group.get("hooks", []):
                    if hook.get("type") != "command":
                        continue
                    command = hook["command"]
                    if all(command != known for known, _ in found):
                        found.append((command, float(hook.get("timeout") or DEFAULT_TIMEOUT)))
        return found

    def payload(self, event: str, session_id: str, **fields: Any) -> dict[str, Any]:
        return {
            "session_id": session_id,
            "transcript_path": fields.pop("transcript_path", ""),
            "cwd": str(self.project),
            "hook_event_name": event,
            **fields,
        }

    def run(self, event: str, session_id: str = "11111111-aaaa", **fields: Any) -> list[HookResult]:
        return self.send(self.payload(event, session_id, **fields))

    def send(self, payload: dict[str, Any]) -> list[HookResult]:
        """Every matching hook of the payload's event, one after another (Claude Code runs
        them in parallel; these tests install one each)."""
        event = payload["hook_event_name"]
        return [
            self.run_one(command, timeout, event, payload)
            for command, timeout in self.entries(event, payload)
        ]

    def run_one(
        self, command: str, timeout: float, event: str, payload: dict[str, Any]
    ) -> HookResult:
        env = {**self.environ, "CLAUDE_PROJECT_DIR": str(self.project)}
        started = time.monotonic()
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=payload.get("cwd") or self.project,
            env=env,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(json.dumps(payload).encode(), timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            timed_out = True
        result = HookResult(
            command,
            None if timed_out else process.returncode,
            out.decode("utf-8", "replace"),
            err.decode("utf-8", "replace"),
            time.monotonic() - started,
            timed_out,
        )
        read_output(result, event)
        return result


def read_output(result: HookResult, event: str) -> None:
    """Claude Code's reading of a hook's exit code and stdout."""
    if result.timed_out:
        result.errors.append(f"timed out after {result.seconds:.1f}s")
        return
    if result.exit_code not in (0, 2):
        result.errors.append(f"non-blocking error: exit {result.exit_code}: {result.stderr}")
        return
    text = result.stdout.strip()
    if result.exit_code != 0 or not text:
        return
    if not text.startswith("{"):
        result.errors.append(f"stdout is plain text, not a decision: {text[:80]!r}")
        return
    try:
        output = json.loads(text)
    except ValueError as exc:
        result.errors.append(f"stdout is malformed JSON: {exc}")
        return
    if not isinstance(output, dict):
        result.errors.append("stdout JSON is not an object")
        return
    specific = output.get("hookSpecificOutput")
    if specific is not None:
        if specific.get("hookEventName") != event:
            result.errors.append(
                f"Hook returned incorrect event name: expected {event!r} but got "
                f"{specific.get('hookEventName')!r}"
            )
        decision = specific.get("permissionDecision")
        if decision is not None and decision not in DECISIONS:
            result.errors.append(f"unknown permissionDecision {decision!r}")
        chosen = specific.get("decision")
        if chosen is not None and (
            not isinstance(chosen, dict) or chosen.get("behavior") not in ("allow", "deny")
        ):
            result.errors.append(f"PermissionRequest decision is not allow or deny: {chosen!r}")
        updated = specific.get("updatedInput")
        if updated is not None and not isinstance(updated, dict):
            result.errors.append("updatedInput is not an object")
        if event == "Elicitation":
            action, content = specific.get("action"), specific.get("content")
            if action not in (None, "accept", "decline", "cancel"):
                result.errors.append(
                    f"Elicitation action is not accept, decline or cancel: {action!r}"
                )
            if content is not None and not isinstance(content, dict):
                result.errors.append("Elicitation content is not an object")
    result.output = output


def decision(results: list[HookResult]) -> Decision:
    found = Decision()
    for result in results:
        specific = (result.output or {}).get("hookSpecificOutput") or {}
        if specific.get("permissionDecision") and found.permission is None:
            found.permission = specific["permissionDecision"]
            found.updated_input = specific.get("updatedInput")
    return found
