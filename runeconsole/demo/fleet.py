"""The simulated fleet: a background process that behaves like the harness and its agents.

Eight agents are scripted fake Claude Code sessions in real tmux sessions (on the demo's
own tmux server), each in its own git worktree; the guardian and the runners are
heartbeated directly, as the harness does for processes outside tmux. The script makes
every state appear within a minute: a runner falls silent (yellow, then red), an
orchestrator crashes and is re-spawned with its predecessor's hook, a worker is killed
cleanly, one orchestrator burns its context until the console hands it off, another
stops at permission prompts, workers ask the operator questions, two workers suspend
a task (context files), and three commit on their branches and ask for merges (one a
MERGE_READY signal the console picks up, one straight into the queue, the second of
two touching the same file predicted to conflict), then stop: once a merge lands, its
worktree and branch go. Two commit their work and stop, ready for review (one then ends);
the fleet sends one a review comment, as an operator would from the review screen, and it
commits a fix. Each agent's worktree is ``.claude/worktrees/{name}`` on ``agent/{key}``.

At ``TASK_AT`` the fleet starts a task with three attempts as ``runeconsole new`` does
(``Dispatch.new``: a branch and worktree each, hooks, the agent in tmux); the agents are the
demo's scripted Claude Code (``fake_claude``) and end differently (``attempt_work``): one
passes the tests, one fails them, one changes more. Compare, test and pick are the
operator's.

Without tmux on the machine every agent is heartbeated directly and the script's crash,
kill and re-spawn are told through the registry, so the liveness colours still show (and
no task is started: its agents need tmux).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from runeconsole.adapters import agent_worktrees
from runeconsole.adapters.claude_cli import COMMAND_ENV
from runeconsole.core.errors import RuneError
from runeconsole.demo import fake_agent
from runeconsole.demo.attempt_work import TASK_NAME, TASK_TEXT
from runeconsole.demo.fake_claude import PROGRAM
from runeconsole.demo.questions import ask_live
from runeconsole.demo.review_work import review_one
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.dispatch.settings import DEFAULT_DIR
from runeconsole.services.dispatch.task_store import TaskStore
from runeconsole.services.project import Project
from runeconsole.services.registry import ACTIVE, CRASHED
from runeconsole.services.supervision.service import Supervisor

# Two workers commit the same file, so the second merge is predicted to conflict.
SAME_FILE = ("--merge-file", "src/api.py")
# key -> (node, fake agent options)
TMUX_AGENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "orchestrator-auth": ("impl_auth", ("--drain", "2.5", "--write-files")),
    "orchestrator-billing": (
        "impl_billing",
        ("--crash-after", "12", "--crash-once", "--write-files"),
    ),
    "orchestrator-search": ("impl_search", ("--ask-every", "25", "--claude-ask-at", "8")),
    "worker-parser": ("impl_search", ("--write-files", "--merge-at", "10", *SAME_FILE)),
    "worker-schema": (
        "impl_billing",
        ("--drain", "0.5", "--suspend-at", "15", "--suspend-task", "4", "--ready-at", "30"),
    ),
    "worker-tokens": (
        "impl_auth",
        ("--write-files", "--merge-at", "22", *SAME_FILE, "--merge-via", "queue"),
    ),
    "worker-docs": ("docs", ("--ready-at", "10", "--claude-permission-at", "12")),
    "worker-migrate": (
        "impl_billing",
        ("--drain", "0.8", "--suspend-at", "28", "--suspend-task", "9", "--merge-at", "36"),
    ),
}
PLAIN_AGENTS = ("guardian-main", "runner-auth", "runner-billing", "runner-search")
SILENT = "runner-search"
CRASHES = "orchestrator-billing"
KILLED = "worker-docs"
SILENT_AT, CRASH_AT, KILL_AT, RESPAWN_AT = 2.0, 12.0, 18.0, 40.0
REVIEWED, REVIEW_AT = "worker-schema", 45.0  # ready at 30 s; its review's comment sent back
QUESTION_AT, QUESTION_EVERY = 6.0, 30.0
TASK_AT, TASK_ATTEMPTS = 4.0, 3


def agent_worktree(root: Path, key: str) -> Path:
    """``.claude/worktrees/{name}`` on branch ``agent/{key}``, made from main the first time:
    where ``runeconsole new`` puts an agent's, so it is listed, and removed once its branch
    lands, the same way."""
    path = root / DEFAULT_DIR / key.split("-", 1)[-1]
    if not path.exists():
        agent_worktrees.add_worktree(root, path, f"agent/{key}", "HEAD")
        agent_worktrees.exclude(root, f"/{DEFAULT_DIR}/")
    return path


class Fleet:
    def __init__(self, root: Path, seed: int = 7, *, tmux: bool = True) -> None:
        self.root = root
        self.tmux = tmux
        self.plain = PLAIN_AGENTS if tmux else (*TMUX_AGENTS, *PLAIN_AGENTS)
        self.supervisor = Supervisor(Project(root))
        self.registry = self.supervisor.registry
        self.interval = self.registry.settings.heartbeat_interval
        self.rng = random.Random(seed)
        self.start = time.monotonic()
        self.next_beat: dict[str, float] = {}
        self.silent: set[str] = set()
        self.script: list[tuple[float, Callable[[], object]]] = [
            (SILENT_AT, lambda: self.silent.add(SILENT)),
            (KILL_AT, self.kill),
            (RESPAWN_AT, self.respawn_crashed),
        ]
        if tmux:  # a review played as an operator would: a comment on a line, then S
            self.script.append((REVIEW_AT, self.review))
        if not tmux:  # the fake agent crashes itself at 12 s; told here instead
            self.script.append((CRASH_AT, self.crash))
        self.next_question, self.asked = QUESTION_AT, 0
        self.attempts: list[str] = []  # the task's agents
        if tmux:
            self.script.append((TASK_AT, self.start_task))

    def launch(self) -> None:
        for key, (node, options) in TMUX_AGENTS.items() if self.tmux else ():
            role, name = key.split("-", 1)
            command = fake_agent.command(key, self.root, "--seed", str(len(name)), *options)
            self.supervisor.spawn(
                role, name, command, worktree=agent_worktree(self.root, key), node_id=node
            )
        for key in self.plain:
            role, name = key.split("-", 1)
            node = TMUX_AGENTS[key][0] if key in TMUX_AGENTS else f"impl_{name}"
            self.registry.register(role, name, node_id=None if role == "guardian" else node)

    def start_task(self) -> None:
        """One task, three attempts, as ``runeconsole new --count 3`` starts them; their
        program is the demo's scripted Claude Code whatever the environment names."""
        os.environ[COMMAND_ENV] = str(self.root / PROGRAM)
        try:
            task = Dispatch(self.supervisor.project, supervisor=self.supervisor).new(
                NewTask(TASK_TEXT, count=TASK_ATTEMPTS, name=TASK_NAME)
            )
        except RuneError as exc:
            print(f"the demo's task was not started: {exc.message}", flush=True)
            return
        self.attempts = [attempt.agent for attempt in task.attempts]

    def task_agents(self) -> list[str]:
        """The agents of every task's attempts (ours, and those the operator started)."""
        found = list(self.attempts)
        with contextlib.suppress(RuneError, OSError):
            tasks = TaskStore(self.supervisor.project).list()
            found += [a.agent for t in tasks for a in t.attempts if a.agent not in found]
        return found

    def review(self) -> None:
        with contextlib.suppress(RuneError):
            review_one(self.root, REVIEWED, REVIEWED.rsplit("-", 1)[-1])

    def crash(self) -> None:
        self.registry.mark_crashed(CRASHES, "process exited 3")

    def kill(self) -> None:
        if self.tmux:
            self.supervisor.kill(KILLED, "finished its task")
        else:
            self.registry.mark_terminated(KILLED, "finished its task")

    def respawn_crashed(self) -> None:
        record = self.registry.get(CRASHES)
        if record.status != CRASHED:
            return
        if self.tmux:
            self.supervisor.respawn(CRASHES, cause="auto")  # as the monitor's auto-respawn
        else:
            role, name = CRASHES.split("-", 1)
            self.registry.register(
                role, name, node_id=record.get("node_id"), predecessor_id=record.get("agent_id")
            )

    def step(self) -> None:
        elapsed = time.monotonic() - self.start
        for item in [item for item in self.script if item[0] <= elapsed]:
            self.script.remove(item)
            item[1]()
        if elapsed >= self.next_question:
            ask_live(self.root, self.asked)
            self.asked += 1
            self.next_question = elapsed + QUESTION_EVERY
        now = time.monotonic()
        for key in self.plain:
            if key in self.silent or now < self.next_beat.get(key, 0.0):
                continue
            if self.registry.get(key).status == ACTIVE:
                self.registry.heartbeat(key)
            self.next_beat[key] = now + self.interval * self.rng.uniform(0.6, 1.0)

    def stop(self) -> None:
        """Stop every agent, on purpose (never read as a crash): the cast and every task's
        attempts (the operator's too); worktrees and state stay for --keep."""
        for key in [*TMUX_AGENTS, *self.task_agents()] if self.tmux else ():
            with contextlib.suppress(RuneError):
                if self.registry.get(key).status == ACTIVE:
                    self.supervisor.kill(key, "the demo ended")

    def run(self, duration: float | None, monitor: bool, parent: int | None = None) -> None:
        """Until ``duration`` has passed, or the process ``parent`` is no longer ours (the
        demo that started us died, even of a kill -9 that left it no time to stop us)."""
        stop_monitor = threading.Event()
        self.launch()
        watcher = threading.Thread(
            target=self.supervisor.run_monitor, kwargs={"stop": stop_monitor}, daemon=True
        )
        if monitor:
            watcher.start()
        deadline = time.monotonic() + duration if duration else None
        try:
            while deadline is None or time.monotonic() < deadline:
                if parent is not None and os.getppid() != parent:
                    break
                # A file someone else is changing: try again next round.
                with contextlib.suppress(RuneError):
                    self.step()
                time.sleep(0.5)
        finally:
            stop_monitor.set()
            if watcher.is_alive():
                watcher.join(timeout=10)
            self.stop()


def _stop(*_: object) -> None:
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runeconsole.demo.fleet")
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--duration", type=float, default=None)
    parser.add_argument(
        "--monitor", action="store_true", help="run the tmux monitor here (no console)"
    )
    parser.add_argument("--parent", type=int, help="stop when this process is gone")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    with contextlib.suppress(SystemExit, KeyboardInterrupt):
        tmux = shutil.which("tmux") is not None
        Fleet(args.root, tmux=tmux).run(args.duration, args.monitor and tmux, args.parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
