"""A fake agent's Claude Code hooks: the events a real session sends, sent the same way.

The demo project has the hooks installed (``runeconsole claude install``); a fake agent
runs each event through the commands installed there, as Claude Code does: JSON on
stdin, ``$CLAUDE_PROJECT_DIR`` set, the entry's timeout kept, one event after another
(a worker thread, so the agent's screen keeps drawing). It keeps a transcript whose
assistant lines carry the usage its context meter shows, so the console's tokens and
context columns come from the real bridge too. An AskUserQuestion call waits for the
hook's answer (the console's), or for nothing (then the agent asks on its own screen);
so does a Bash call that needs permission (``permission``), for the console's decision.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

from runeconsole.demo.claude_scene import ASK_CALL, PERMISSION_INPUT
from runeconsole.services.claude.settings import CONTEXT_WINDOW

NO_ANSWER_YET = object()
TOOL_EVENT_EVERY = 3  # a tool call's Pre/PostToolUse every this many steps (they cost a process)


def installed_commands(root: Path) -> dict[str, list[tuple[str | None, str, float]]]:
    """Event -> (matcher, command, timeout) from the project's local settings."""
    try:
        hooks = json.loads((root / ".claude" / "settings.local.json").read_text()).get("hooks")
    except (OSError, ValueError):
        return {}
    found: dict[str, list[tuple[str | None, str, float]]] = {}
    for event, groups in (hooks or {}).items():
        for group in groups:
            for hook in group.get("hooks", []):
                entry = (group.get("matcher"), hook["command"], float(hook.get("timeout", 60)))
                found.setdefault(event, []).append(entry)
    return found


class ClaudeSession:
    def __init__(self, root: Path, cwd: Path) -> None:
        self.root, self.cwd = root, cwd
        self.commands = installed_commands(root)
        self.session_id = str(uuid.uuid4())
        self.transcript = root / "tmp" / "demo-transcripts" / f"{self.session_id}.jsonl"
        self.steps = 0
        self.answer: object = NO_ANSWER_YET
        self.decision: object = NO_ANSWER_YET
        self._queue: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
        self._sender = threading.Thread(target=self._send_in_turn, daemon=True)
        if self.commands:
            self.transcript.parent.mkdir(parents=True, exist_ok=True)
            self._sender.start()

    # -- what the fake agent calls ------------------------------------------------------------

    def event(self, name: str, **fields: Any) -> None:
        if self.commands:
            self._queue.put((name, fields))

    def started(self, prompt: str) -> None:
        self.event("SessionStart", source="startup")
        self.event("UserPromptSubmit", prompt=prompt)

    def tool(self, call: str, context_left: float) -> None:
        """A tool call (``Read(src/x.py)``) and the answer that asked for it."""
        self.steps += 1
        if not self.commands or self.steps % TOOL_EVENT_EVERY:
            return
        self._spend(context_left)
        name = call.split("(", 1)[0].replace(" ", "")
        self.event("PreToolUse", tool_name=name, tool_input={"call": call})
        self.event("PostToolUse", tool_name=name, tool_input={"call": call}, tool_response={})

    def ask(self) -> None:
        """The AskUserQuestion call: ``answer`` becomes the hook's answers (a dict of
        question -> answer) or ``None`` when it printed nothing."""
        self.answer = NO_ANSWER_YET
        self.event("PreToolUse", tool_name="AskUserQuestion", tool_input=ASK_CALL)

    def permission(self) -> None:
        """A Bash call Claude Code asks permission for: ``decision`` becomes the hook's
        decision (``{"behavior": …}``) or ``None`` when it printed nothing."""
        self.decision = NO_ANSWER_YET
        suggested: dict[str, Any] = {
            "type": "addRules",
            "behavior": "allow",
            "destination": "localSettings",
            "rules": [{"toolName": "Bash", "ruleContent": "npm run build:*"}],
        }
        fields = {"tool_name": "Bash", "tool_input": PERMISSION_INPUT}
        self.event("PermissionRequest", **fields, permission_suggestions=[suggested])

    def decided(self) -> list[str] | None:
        """What the agent's screen says once the console decided (then the tool result
        is sent on); ``None`` while undecided or when Claude Code's dialog asks instead."""
        decision, self.decision = self.decision, NO_ANSWER_YET
        if not isinstance(decision, dict):
            return None
        call = f"⏺ Bash({PERMISSION_INPUT['command']})"
        if decision.get("behavior") != "allow":
            return [call, f"  ⎿  Denied by PermissionRequest hook: {decision.get('message')}"]
        self.event("PostToolUse", tool_name="Bash", tool_input=PERMISSION_INPUT, tool_response={})
        return [call, "  ⎿  dist/ rebuilt (412 kB)"]

    def ended(self) -> None:
        """SessionEnd, then wait (a little) until every event is sent: the agent exits."""
        self.event("SessionEnd", reason="other")
        self._queue.put(None)
        if self._sender.is_alive():
            self._sender.join(timeout=10)

    # -- sending ---------------------------------------------------------------------------

    def _spend(self, context_left: float) -> None:
        used = int(CONTEXT_WINDOW * (100 - context_left) / 100)
        usage = {
            "input_tokens": used // 20,
            "output_tokens": 300,
            "cache_read_input_tokens": used - used // 20 - used // 10,
            "cache_creation_input_tokens": used // 10,
        }
        line = {"type": "assistant", "message": {"id": f"msg_{uuid.uuid4().hex}", "usage": usage}}
        with open(self.transcript, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")

    def _send_in_turn(self) -> None:
        while (item := self._queue.get()) is not None:
            name, fields = item
            output = self._send(name, fields)
            if fields.get("tool_name") == "AskUserQuestion" and name == "PreToolUse":
                specific = (output or {}).get("hookSpecificOutput") or {}
                self.answer = (specific.get("updatedInput") or {}).get("answers")
            elif name == "PermissionRequest":
                specific = (output or {}).get("hookSpecificOutput") or {}
                self.decision = specific.get("decision")

    def _send(self, event: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.cwd),
            "hook_event_name": event,
            **fields,
        }
        # Without tmux's variables: the hook would record this pane as the session's, with
        # no Claude Code process in it to vouch for it (a fake agent is not one), and a
        # message would be refused; the pane ``spawn`` recorded (with its process) is used.
        hidden = ("TMUX", "TMUX_PANE")
        env = {k: v for k, v in os.environ.items() if k not in hidden}
        env["CLAUDE_PROJECT_DIR"] = str(self.cwd)
        answer = None
        for matcher, command, timeout in self.commands.get(event, []):
            if matcher not in (None, "", "*") and matcher != fields.get("tool_name"):
                continue
            try:
                done = subprocess.run(
                    ["/bin/sh", "-c", command],
                    input=json.dumps(payload).encode(),
                    capture_output=True,
                    timeout=timeout,
                    cwd=self.cwd,
                    env=env,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired):
                continue
            if done.stdout.strip().startswith(b"{"):
                answer = json.loads(done.stdout)
        return answer
