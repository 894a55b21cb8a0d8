"""A working fleet, simulated through the real hook: what the soak and the hook-load
benchmarks share.

``Fleet`` is a project with runeconsole's hooks installed by ``claude install`` and
``AGENTS`` Claude Code sessions. Events are sent as Claude Code sends them: the installed
command run through ``/bin/sh -c`` with the event's JSON on stdin and
``$CLAUDE_PROJECT_DIR`` set, at ``rate`` hook processes a second in all. Each session's
events follow one another as a session's do (a prompt, tool calls, a stop), with now and
then a permission request or an AskUserQuestion call, which waits for the operator (the
console is open). Every process is recorded: its event, when, how long, its exit and its
output.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import QUESTION

from runeconsole.adapters import git
from runeconsole.adapters.claude_settings import settings_path
from runeconsole.services.claude.install.install import plan_install

TALISMAN = """\
runeconsole:
  claude:
    ask_wait_seconds: {wait}
    permission_wait_seconds: {wait}
  merge_queue:
    test_command: "true"
"""


@dataclass
class Run:
    """One hook process."""

    agent: str
    event: str
    started: float  # time.time()
    seconds: float = 0.0
    cpu: float = 0.0  # its own CPU seconds (user + system), however long it waited for a core
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    responder: bool = False  # an event the hook answers (it may wait for the operator)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Agent:
    session: str
    transcript: Path
    steps: Iterator[tuple[str, dict[str, Any]]]
    busy: bool = False
    sent: list[Run] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"claude-project-{self.session[:8]}"


class Fleet:
    def __init__(
        self,
        base: Path,
        agents: int,
        *,
        rate: float,
        ask_share: float = 0.005,
        permission_share: float = 0.03,
        wait_seconds: float = 20.0,
        max_in_flight: int = 8,
        seed: int = 7,
    ) -> None:
        self.root = base / "project"
        git.init_repo(self.root)
        (self.root / ".git" / "info" / "exclude").write_text(".claude/\ntmp/\n")
        (self.root / ".claude").mkdir(exist_ok=True)
        (self.root / ".claude" / "talisman.yml").write_text(TALISMAN.format(wait=wait_seconds))
        plan_install(settings_path("local", self.root)).apply()
        settings = json.loads((self.root / ".claude" / "settings.local.json").read_text())
        self.command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        self.env = {**os.environ, "CLAUDE_PROJECT_DIR": str(self.root)}
        self.rate = rate
        self.ask_share, self.permission_share = ask_share, permission_share
        self.random = random.Random(seed)
        transcripts = base / "transcripts"
        transcripts.mkdir()
        self.agents = []
        for _ in range(agents):
            session = str(uuid.UUID(int=self.random.getrandbits(128)))
            transcript = transcripts / f"{session}.jsonl"
            transcript.touch()
            self.agents.append(Agent(session, transcript, self._script()))
        self.runs: list[Run] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=96, thread_name_prefix="hook")
        # Hook processes at once, the ones that wait for the operator aside: a machine that
        # cannot keep up gets fewer a second (the run says how many), not a pile-up.
        self.max_in_flight = max_in_flight
        self._in_flight = threading.BoundedSemaphore(max_in_flight)
        self._tool = 0
        self.driven = 0.0  # seconds the fleet was driven

    # -- what each session does ----------------------------------------------------------------

    def _script(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """SessionStart, then turns: a prompt, tool calls (now and then a permission
        request or a question instead), the stop."""
        yield "SessionStart", {"source": "startup", "model": "claude-opus-5-5"}
        while True:
            yield "UserPromptSubmit", {"prompt": "go on", "permission_mode": "default"}
            for _ in range(self.random.randint(1, 4)):
                self._tool += 1
                tool_id = f"toolu_{self._tool:08d}"
                draw = self.random.random()
                if draw < self.ask_share:
                    yield "PreToolUse", {
                        "tool_name": "AskUserQuestion", "tool_input": QUESTION,
                        "tool_use_id": tool_id,
                    }  # fmt: skip
                    continue
                command = {"command": f"npm test -- --shard {self._tool}", "description": "Test"}
                if draw < self.ask_share + self.permission_share:
                    yield "PermissionRequest", {"tool_name": "Bash", "tool_input": command}
                else:
                    yield "PreToolUse", {
                        "tool_name": "Bash", "tool_input": command, "tool_use_id": tool_id,
                    }  # fmt: skip
                yield "PostToolUse", {
                    "tool_name": "Bash", "tool_input": command, "tool_use_id": tool_id,
                    "tool_response": {"stdout": "ok", "exit_code": 0}, "duration_ms": 800,
                }  # fmt: skip
            yield "Stop", {"stop_hook_active": False, "last_assistant_message": "Done."}

    def payload(self, agent: Agent, event: str, fields: dict[str, Any]) -> bytes:
        body = {
            "session_id": agent.session,
            "transcript_path": str(agent.transcript),
            "cwd": str(self.root),
            "hook_event_name": event,
            "prompt_id": "p-1",
            "permission_mode": "default",
            **fields,
        }
        return json.dumps(body).encode()

    # -- running -------------------------------------------------------------------------------

    def send(self, agent: Agent, event: str, fields: dict[str, Any]) -> Run:
        """One event through the installed command, as Claude Code runs it."""
        if self.random.random() < 0.2:
            _grow(agent.transcript, len(agent.sent))
        run = Run(agent.key, event, time.time())
        run.responder = event == "PermissionRequest" or fields.get("tool_name") == "AskUserQuestion"
        if event == "PermissionRequest":
            run.detail["subject"] = fields["tool_input"]["command"]
        elif run.responder:
            run.detail["task_id"] = f"ask-{fields['tool_use_id']}"
        started = time.perf_counter()
        process = subprocess.Popen(
            ["/bin/sh", "-c", self.command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=self.root, env=self.env,
        )  # fmt: skip
        assert process.stdin and process.stdout and process.stderr
        process.stdin.write(self.payload(agent, event, fields))
        process.stdin.close()
        out, err = process.stdout.read(), process.stderr.read()  # a few bytes at most
        # Reaped here, for its own CPU time (the shell's and the hook's).
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        run.seconds = time.perf_counter() - started
        run.cpu = usage.ru_utime + usage.ru_stime
        run.exit_code, run.stdout = process.returncode, out.decode("utf-8", "replace")
        run.stderr = err.decode("utf-8", "replace")
        process.stdout.close()
        process.stderr.close()
        return run

    def _one(self, agent: Agent, slot: bool) -> None:
        event, fields = next(agent.steps)
        responder = event == "PermissionRequest" or fields.get("tool_name") == "AskUserQuestion"
        if slot and responder:
            self._in_flight.release()  # it waits for the operator, not for a core
        try:
            run = self.send(agent, event, fields)
        finally:
            agent.busy = False
            if slot and not responder:
                self._in_flight.release()
        with self._lock:
            agent.sent.append(run)
            self.runs.append(run)

    def drive(self, seconds: float) -> None:
        """Hook processes at ``rate`` a second for ``seconds``: each slot goes to the next
        session not waiting for its last event (as a session waits for its hooks)."""
        interval = 1.0 / self.rate
        started = time.monotonic()
        deadline = started + seconds
        next_slot = started
        turn = 0
        while time.monotonic() < deadline and not self._stop.is_set():
            if not self._in_flight.acquire(timeout=1.0):
                next_slot = time.monotonic()  # behind: no catching up in a burst
                continue
            for _ in range(len(self.agents)):
                agent = self.agents[turn % len(self.agents)]
                turn += 1
                if not agent.busy:
                    agent.busy = True
                    self._pool.submit(self._one, agent, True)
                    break
            else:
                self._in_flight.release()
            next_slot = max(next_slot + interval, time.monotonic() - interval)
            time.sleep(max(0.0, next_slot - time.monotonic()))
        self.driven = time.monotonic() - started

    def finish(self) -> None:
        """Every session's last event is a Stop, once its events in flight are done."""
        pending = list(self.agents)
        while pending:
            for agent in list(pending):
                if not agent.busy:
                    agent.busy = True
                    agent.steps = iter([("Stop", {"stop_hook_active": False})])
                    self._pool.submit(self._one, agent, False)
                    pending.remove(agent)
            time.sleep(0.05)
        self._pool.shutdown(wait=True)

    def stop(self) -> None:
        self._stop.set()


def _grow(transcript: Path, index: int) -> None:
    """The session's transcript grows as it works (the hook reads its usage)."""
    usage = {
        "input_tokens": 1200, "output_tokens": 80,
        "cache_read_input_tokens": 16000 + 500 * index, "cache_creation_input_tokens": 2000,
    }  # fmt: skip
    lines = [
        {"type": "user", "message": {"content": "x" * 500}},
        {"type": "assistant", "message": {"id": f"msg_{index}", "usage": usage}},
    ]
    with open(transcript, "a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)
