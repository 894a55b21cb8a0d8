"""Worker questions for the demo: a fixed scene (screenshots, snapshot tests) and live ones.

The scene has a blocking and a non-blocking open question, one already answered and
one half-written file, at fixed ages relative to a manual clock. The live fleet asks
the same questions now and then without waiting, so the console's own timer picks
option A when nobody answers.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from runeconsole.adapters.clock import Clock, ManualClock
from runeconsole.adapters.tasks import TaskStore
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import NON_BLOCKING, AskRequest, Questions, RelaySettings

SIGNAL_DIR = "rune-work-20260226T115500Z"
LIVE_SIGNAL_DIR = "rune-work-demo"
BCRYPT = AskRequest(
    task_id="task-3",
    question="Should the auth module use bcrypt or argon2 for password hashing?",
    options=["A: Use bcrypt (already in deps)", "B: Use argon2"],
    context="Task requires password hashing. Found bcrypt in requirements.txt but the plan "
    "does not say; argon2 would be a new dependency.",
    worker="worker-tokens",
    signal_dir=SIGNAL_DIR,
)
LEGACY_ROUTES = AskRequest(
    task_id="task-7",
    question="Keep the legacy /v1 routes or remove them in this change?",
    options=["A: Keep them, deprecated", "B: Remove them", "C: Ask the API owners"],
    urgency=NON_BLOCKING,
    worker="worker-parser",
    signal_dir=SIGNAL_DIR,
)
RENAME = AskRequest(
    task_id="task-8",
    question="Rename the column?",
    options=["A: Yes", "B: No"],
    worker="worker-schema",
    signal_dir=SIGNAL_DIR,
)
UNREADABLE = "task-9.q1.question"


def scene_questions(root: Path, clock: ManualClock) -> Questions:
    """The question scene under ``root``, asked 47 s and 27 s before ``clock``'s time."""
    # The scene's countdowns are drawn against a three-minute timeout.
    settings = RelaySettings(timeout_seconds=180)
    relay = Questions(Project(root, clock), settings, TaskStore(root / ".no-claude-tasks"))
    clock.advance(-47)
    relay.ask(BCRYPT)
    clock.advance(20)
    relay.ask(LEGACY_ROUTES)
    answered, _ = relay.ask(RENAME)
    relay.answer(answered.id, option="A")
    broken = relay.base / SIGNAL_DIR / UNREADABLE
    broken.write_text('{"task_id": "task-9", "question": "Which')
    stamp = clock.now().timestamp()
    os.utime(broken, (stamp, stamp))  # its age in the pane comes from the file's time
    clock.advance(27)
    return relay


def ask_live(root: Path, number: int, clock: Clock | None = None) -> None:
    """The fleet's ``number``-th question (they take turns), asked without waiting."""
    request = (BCRYPT, LEGACY_ROUTES, RENAME)[number % 3]
    live = dataclasses.replace(request, signal_dir=LIVE_SIGNAL_DIR)
    Questions(Project(root, clock), tasks=TaskStore(root / ".no-claude-tasks")).ask(live)
