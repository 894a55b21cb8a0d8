"""A scripted stand-in for a Claude Code session, run inside tmux by the supervisor.

It draws a Claude-like screen (transcript, input box, ``Context left until
auto-compact: N%`` going down), walks through the work phases and writes each to
its hook, heartbeats through the registry, and now and then stops at a permission
prompt or a question until someone answers in the pane: as in Claude Code, Enter
there picks the highlighted option ("Yes") whatever was typed, and Esc declines. Told
to checkpoint it
updates its hook; told ``GUARDIAN: Save your work and exit cleanly`` it saves its
hook and exits 0.
``--suspend-at`` writes a suspended task's context file (as ``runeconsole suspend``
does) and ``--merge-at`` commits its work on the agent's branch, requests its merge and
stops, once each (not again in a continuation); ``--ready-at`` commits its work and stops,
ready for review, and addresses a review's comments when they arrive as a prompt;
``--attempt N`` with ``--attempt-at`` is one attempt of a task (``--prompt``): it commits
what attempt N commits (``attempt_work``) and stops.
``--hang-on-handoff`` makes it ignore that (and hang-ups) so the supervisor has
to force-kill it; ``--crash-after`` makes it die abruptly.

    python -m runeconsole.demo.fake_agent --key worker-parser --root PROJECT
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runeconsole.adapters.git import run_git
from runeconsole.core.errors import RuneError
from runeconsole.demo import attempt_work
from runeconsole.demo.claude_scene import ASK_CALL, PERMISSION_INPUT
from runeconsole.demo.claude_session import NO_ANSWER_YET, ClaudeSession
from runeconsole.demo.fake_options import options
from runeconsole.demo.fake_script import HARNESS_PHASE, PROMPTS, TOOLS
from runeconsole.demo.fake_terminal import ESCAPE, TRANSCRIPT_LINES, WIDTH, Keys, Prompt, screen
from runeconsole.demo.merge_queue import commit_files
from runeconsole.demo.review_work import REVIEW_HEADER, address, deliver
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.merge_queue import OUR_NAME, MergeQueue
from runeconsole.services.pane_patterns import WORK_PHASES
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.service import CHECKPOINT_MESSAGE, HANDOFF_MESSAGE, WISDOM_ENV
from runeconsole.services.suspension import Suspension

DEMO_ARC = "arc-demo"


def command(key: str, root: Path, *options: str) -> list[str]:
    """The command line that runs a fake agent, as ``Supervisor.spawn`` takes it."""
    return [
        sys.executable,
        "-m",
        "runeconsole.demo.fake_agent",
        "--key",
        key,
        "--root",
        str(root),
        *options,
    ]


class FakeAgent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.key: str = args.key
        self.root: Path = args.root
        self.args = args
        self.rng = random.Random(args.seed)
        # Lenient, as heartbeats are: a simulated agent never stops over a setting.
        self.project = Project(self.root, strict=False)
        self.registry = Registry(self.project)
        self.hook_files = HookFiles(self.project, self.registry.signals)
        self.module: str = args.module or self.key.rsplit("-", 1)[-1]
        self.context = float(args.context)
        self.transcript: list[str] = []
        self.prompt: Prompt | None = None
        self.phase_index = 0
        self.ticks_in_phase = 0
        self.next_beat = 0.0
        self.started = time.monotonic()
        self.keys = Keys()
        self.interrupted = False  # declined with Esc: no work until told what to do
        self.claude = ClaudeSession(self.root, Path.cwd())  # its hooks, if installed
        self.asking = False  # an AskUserQuestion call waits for the console's answer
        self.resting = False  # its work is done and committed: it waits for a review
        self.fix_at: float | None = None  # a review's comments arrived: fixed at this moment

    @property
    def notes_name(self) -> str:
        """The notes ``--write-files`` leaves uncommitted while it works."""
        return f"{self.module}_notes.md"

    @property
    def phase(self) -> str:
        return WORK_PHASES[self.phase_index]

    def worktree(self) -> Path | None:
        with contextlib.suppress(RuneError):
            path = self.registry.get(self.key).worktree
            return Path(path) if path and Path(path).is_dir() else None
        return None

    def say(self, *lines: str) -> None:
        self.transcript += [line[:WIDTH] for line in lines] + [""]
        self.transcript = self.transcript[-TRANSCRIPT_LINES:]

    def draw(self) -> None:
        sys.stdout.write(screen(self.key, self.transcript, self.prompt, self.context))
        sys.stdout.flush()

    def heartbeat(self) -> None:
        now = time.monotonic()
        if now >= self.next_beat:
            with contextlib.suppress(RuneError):
                self.registry.heartbeat(self.key)
            self.next_beat = now + self.args.heartbeat

    def set_phase(self, index: int) -> None:
        self.phase_index = index % len(WORK_PHASES)
        self.ticks_in_phase = 0
        self.say(f"⏺ Phase: {self.phase} — {self.module}")
        with contextlib.suppress(RuneError):
            self.hook_files.update(
                self.key,
                phase=HARNESS_PHASE[self.phase],
                work_phase=self.phase,
                summary=f"{self.phase} of the {self.module} module",
                worktree=self.worktree(),
            )

    def work(self) -> None:
        """One step of scripted work: a tool call, context spent, maybe a phase or a prompt."""
        tool = self.rng.choice(TOOLS[self.phase]).format(m=self.module)
        self.say(f"⏺ {tool}", "  ⎿  Done")
        self.context = max(0.0, self.context - self.args.drain)
        self.claude.tool(tool, self.context)
        if self.phase == "implementation" and self.args.write_files:
            worktree = self.worktree()
            if worktree is not None:
                notes = worktree / self.notes_name
                with open(notes, "a", encoding="utf-8") as handle:
                    handle.write(f"- step at {time.strftime('%H:%M:%S')}\n")
        self.ticks_in_phase += 1
        if self.args.ask_every and self.rng.random() < 1.0 / self.args.ask_every:
            title, detail, question, options = self.rng.choice(PROMPTS)
            self.prompt = (title, detail, question.format(m=self.module), options)
            if detail:  # a permission prompt: Claude Code tells its Notification hook
                message = "Claude needs your permission to use Bash"
                self.claude.event(
                    "Notification", message=message, notification_type="permission_prompt"
                )
        elif self.ticks_in_phase >= self.args.phase_ticks:
            self.set_phase(self.phase_index + 1)

    def handle(self, line: str) -> None:
        text = line.strip()
        self.interrupted = False
        if self.prompt is not None:
            # As in Claude Code: at a menu, Enter picks the highlighted option (or the
            # number typed); whatever else was typed is lost.
            options = self.prompt[3]
            pick = int(text) if text.isdigit() and 1 <= int(text) <= len(options) else 1
            self.say(f"⏺ Chose {pick}. {options[pick - 1]}")
            self.prompt, self.asking = None, False
            self.claude.event("PostToolUse", tool_name="Bash", tool_input={}, tool_response={})
            return
        if not text:
            return
        if text == HANDOFF_MESSAGE:
            self.say(f"> {text}")
            if self.args.hang_on_handoff:
                self.say("⏺ (no response)")
                self.draw()
                while True:
                    time.sleep(3600)
            self.save_and_exit()
        if text.startswith(REVIEW_HEADER):
            self.say(f"> {text}")
            self.claude.event("UserPromptSubmit", prompt=text)
            self.fix_at = time.monotonic() + 3.0
            return
        if text.startswith(CHECKPOINT_MESSAGE[:40]):
            self.say(f"> {text}")
            with contextlib.suppress(RuneError):
                self.hook_files.update(
                    self.key,
                    summary=f"{self.phase} of the {self.module} module (checkpoint)",
                    worktree=self.worktree(),
                )
            self.say("⏺ Checkpoint saved to the hook.")
            return
        self.say(f"> {text}")

    def escape(self) -> None:
        """Esc: at a menu it answers "No" (declines or cancels) and, like Claude Code,
        stops to wait for what to do instead; elsewhere nothing."""
        if self.prompt is not None:
            self.say("⏺ Declined (esc). What should I do instead?")
            self.prompt = None
            self.interrupted = True

    def scripted(self) -> list[tuple[float, Callable[[], None]]]:
        """What ``--suspend-at`` and ``--merge-at`` ask for, at their times."""
        events: list[tuple[float, Callable[[], None]]] = []
        if self.args.suspend_at is not None:
            events.append((self.args.suspend_at, self.suspend))
        if self.args.merge_at is not None:
            events.append((self.args.merge_at, self.request_merge))
        if self.args.claude_ask_at is not None:
            events.append((self.args.claude_ask_at, self.ask_claude))
        if self.args.claude_permission_at is not None:
            events.append((self.args.claude_permission_at, self.ask_permission))
        if self.args.ready_at is not None:
            events.append((self.args.ready_at, self.ready))
        if self.args.attempt is not None and self.args.attempt_at is not None:
            events.append((self.args.attempt_at, self.finish_attempt))
        return events

    def ready(self) -> None:
        """Commit the work and stop (Claude Code's Stop): ready for review."""
        self.say(*deliver(self.worktree(), self.module))
        self.rest()

    def finish_attempt(self) -> None:
        """An attempt of a task: its work committed as attempt N's is, then stop."""
        self.set_phase(WORK_PHASES.index("completion"))
        self.say(*attempt_work.deliver(self.worktree(), self.args.attempt, self.module))
        self.rest()

    def rest(self) -> None:
        """Its work is done: no more steps, and Claude Code's Stop (idle)."""
        self.resting = True
        self.claude.event("Stop")

    def fix(self) -> None:
        """The review's comments, addressed in a new commit; then stop again."""
        self.fix_at = None
        self.say(*address(self.worktree(), self.module))
        self.claude.event("Stop")

    def ask_claude(self) -> None:
        """An AskUserQuestion call: its dialog shows until the hook brings the console's
        answers; if it brings none, the agent asks on its own screen (Enter picks)."""
        questions: list[dict[str, Any]] = ASK_CALL["questions"]
        tabs = "  ".join(f"☐ {q['header']}" for q in questions) + "  ✔ Submit"
        labels = [option["label"] for option in questions[0]["options"]]
        self.prompt = (tabs, "", str(questions[0]["question"]), labels)
        self.asking = True
        self.claude.ask()

    def ask_permission(self) -> None:
        """A Bash call needing permission: the dialog shows until the console decides (if
        it does not, Enter here answers, as in Claude Code)."""
        command = PERMISSION_INPUT["command"]
        self.prompt = ("Bash command", command, "Do you want to proceed?", ["Yes", "No (esc)"])
        self.claude.permission()

    def collect_decision(self) -> None:
        said = self.claude.decided()
        if said is not None:
            self.prompt = None
            self.say(*said)

    def collect_answers(self) -> None:
        answers = self.claude.answer
        if not self.asking or answers is NO_ANSWER_YET:
            return
        self.asking = False
        if isinstance(answers, dict):
            self.prompt = None
            lines = [f"     · {question} → {answer}" for question, answer in answers.items()]
            self.say("⏺ Answered Claude's questions:", *lines)
            self.claude.event("PostToolUse", tool_name="AskUserQuestion", tool_input=ASK_CALL)

    def suspend(self) -> None:
        """Write a suspended task's context file, as ``runeconsole suspend`` does."""
        task = self.args.suspend_task
        try:
            result = Suspension(self.project).suspend(
                task_id=task,
                worker=self.key,
                arc_id=DEMO_ARC,
                reason="turn_limit",
                last_action=f"{self.phase} of src/{self.module}.py",
                file_targets=[f"src/{self.module}.py"],
                body=f"Working on the {self.module} module ({self.phase}).\n"
                f"Next: finish src/{self.module}.py and its tests.",
                stash=False,
            )
        except RuneError as exc:
            self.say(f"⏺ Could not suspend {task}: {exc.message}")
            return
        where = result.path.relative_to(self.root)
        self.say(f"⏺ Bash(runeconsole suspend --task {task} --reason turn_limit)", f"  ⎿  {where}")

    def request_merge(self) -> None:
        """Commit one file and its notes on the agent's branch, then ask for the merge (a
        ``MERGE_READY`` signal, or straight into the queue with ``--merge-via queue``) and
        stop: its work is done, nothing left uncommitted, so once it lands its worktree can
        go."""
        worktree = self.worktree()
        try:
            record = self.registry.get(self.key)
            if worktree is None:
                raise RuneError("no worktree of its own to commit in")
            name = self.args.merge_file.format(m=self.module)
            node = record.get("node_id") or f"impl_{self.module}"
            work = {name: f"# {name} as {self.key} wrote it\n"}
            notes = worktree / self.notes_name
            if notes.is_file():
                work[self.notes_name] = notes.read_text(encoding="utf-8")
            commit_files(worktree, work, f"{node}: {name}")
            branch = run_git(["rev-parse", "--abbrev-ref", "HEAD"], worktree).stdout.strip()
            if self.args.merge_via == "queue":
                entry, _ = MergeQueue(self.project).add(
                    branch, identity=self.key, node_id=node, worktree=str(worktree)
                )
                said = f"queued as {entry.entry_id}"
            else:
                payload = {
                    "branch": branch,
                    "identity_name": self.key,
                    "node_id": node,
                    "worktree_path": str(worktree),
                }
                self.registry.signals.send("MERGE_READY", self.key, OUR_NAME, payload)
                said = "MERGE_READY sent"
        except (RuneError, OSError) as exc:
            self.say(f"⏺ Could not request a merge: {getattr(exc, 'message', exc)}")
            return
        self.say(f'⏺ Bash(git commit -m "{node}: {name}")', f"  ⎿  {branch}: {said}")
        self.rest()

    def save_and_exit(self) -> None:
        with contextlib.suppress(RuneError):
            self.hook_files.update(
                self.key,
                summary=f"{self.phase} of the {self.module} module (saved at handoff)",
                instructions=f"Continue the {self.phase} of {self.module}; the notes file "
                "lists the steps already done.",
                worktree=self.worktree(),
            )
        self.say("⏺ Work state saved to the hook. Exiting cleanly.")
        self.draw()
        self.claude.ended()
        raise SystemExit(0)

    def run(self) -> None:
        wisdom = os.environ.get(WISDOM_ENV)
        if wisdom:
            self.context = 100.0  # a continuation starts with a fresh context
            with contextlib.suppress(OSError):
                first = Path(wisdom).read_text(encoding="utf-8").splitlines()[0]
                self.say(f"⏺ Resuming. {first}")
        prompt = self.args.prompt or f"Work on the {self.module} module."
        if self.args.prompt and not wisdom:
            self.say(f"> {prompt}")
        hook = self.hook_files.read(self.key)
        resume = hook.work_phase if hook is not None and not hook.error else None
        self.set_phase(WORK_PHASES.index(resume) if wisdom and resume in WORK_PHASES else 0)
        next_step = time.monotonic()
        self.claude.started(prompt)
        crash_after = 0.0 if wisdom and self.args.crash_once else self.args.crash_after
        # A continuation does not do again what its predecessor did.
        scripted = [] if wisdom else self.scripted()
        while True:
            elapsed = time.monotonic() - self.started
            if crash_after and elapsed >= crash_after:
                os._exit(3)
            for event in [e for e in scripted if e[0] <= elapsed]:
                scripted.remove(event)
                event[1]()
            self.heartbeat()
            if self.fix_at is not None and time.monotonic() >= self.fix_at:
                self.fix()
            self.collect_answers()
            self.collect_decision()
            busy = self.prompt is None and not (self.interrupted or self.resting)
            if busy and time.monotonic() >= next_step:
                self.work()
                next_step = time.monotonic() + self.args.tick
            self.draw()
            for key in self.keys.read(min(self.args.tick, 1.0)):
                if key == ESCAPE:
                    self.escape()
                else:
                    self.handle(key)


def main(argv: list[str] | None = None) -> int:
    args = options().parse_args(argv)
    if args.hang_on_handoff:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    agent = FakeAgent(args)
    try:
        agent.run()
    finally:
        agent.keys.restore()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
