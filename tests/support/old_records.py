"""Months of records, written at once: decided permission requests and answered questions
as the hook and the console write them, dated in the past. The retention benchmark builds
a root of 100,000 old decisions with it, and the tests a few hundred.

Files are written directly (no temp file, no fsync): a throw-away fixture needs no
durability, and 100,000 fsynced files take minutes. Their times are set to the moment
they say.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path

from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.questions import relay_files

COMMANDS = ("npm test", "npm run build", "git status", "pytest -q", "ls -la", "make lint")
DECIDERS = (
    (files.ALLOW, files.OPERATOR),
    (files.ALLOW, files.RULE),
    (files.DENY, files.OPERATOR),
    (None, files.NOBODY),
)


def _write(path: Path, body: dict[str, object], moment: datetime) -> None:
    path.write_text(json.dumps(body, indent=2) + "\n")
    stamp = moment.timestamp()
    os.utime(path, (stamp, stamp))


def _spread(count: int, newest: datetime, days: float) -> list[datetime]:
    """``count`` moments evenly over ``days`` days before ``newest``, oldest first."""
    step = timedelta(days=days) / max(count, 1)
    return [newest - step * (count - n) for n in range(count)]


def decided_requests(
    root: Path, count: int, *, newest: datetime, days: float = 60, agents: int = 50
) -> list[str]:
    """``count`` permission requests with their decisions, asked over ``days`` days up to
    ``newest``; returns their ids (oldest first)."""
    paths = ProjectPaths(root)
    directory = files.directory(paths)
    directory.mkdir(parents=True, exist_ok=True)
    ids = []
    for n, asked in enumerate(_spread(count, newest, days)):
        request_id = f"{files.PREFIX}{asked:%Y%m%dT%H%M%S%f}-{10000 + n % 50000}"
        agent = f"claude-web-{n % agents:04d}"
        command = f"{COMMANDS[n % len(COMMANDS)]} --n {n}"
        fields = files.request_fields(
            agent,
            "Bash",
            {"command": command, "description": "Run it"},
            None,
            request_id=request_id,
            now=asked,
            wait_seconds=120,
            session_id=f"session-{n % agents:04d}",
            cwd=str(root),
        )
        fields["hook_pid"] = 0  # long gone
        behavior, by = DECIDERS[n % len(DECIDERS)]
        decision = files.decision_fields(
            request_id, behavior, by, via="console", now=asked + timedelta(seconds=4)
        )
        path = directory / f"{request_id}{files.REQUEST}"
        _write(path, fields, asked)
        _write(files.decision_path(path), decision, asked + timedelta(seconds=4))
        ids.append(request_id)
    return ids


def answered_questions(root: Path, count: int, *, newest: datetime, days: float = 60) -> list[str]:
    """``count`` relayed AskUserQuestion questions with their answers; returns their ids."""
    directory = ProjectPaths(root).claude_questions
    directory.mkdir(parents=True, exist_ok=True)
    spec = relay_files.QuestionSpec(
        {"question": "Which hash?", "options": [{"label": "bcrypt"}, {"label": "argon2"}]}
    )
    ids = []
    for n, asked in enumerate(_spread(count, newest, days)):
        task = f"ask-toolu_old{n:07d}"
        fields = relay_files.question_fields(
            spec, 1, 1, task_id=task, key=f"claude-web-{n % 50:04d}", now=asked,
            expires_at=iso_z(asked + timedelta(minutes=5)), hook_pid=0,
        )  # fmt: skip
        answer = {
            "task_id": task,
            "answer": "argon2",
            "decided_by": "user",
            "seq": 1,
            "option": "B",
            "answered_at": iso_z(asked + timedelta(seconds=9)),
        }
        _write(directory / f"{task}.q1.question", fields, asked)
        _write(directory / f"{task}.q1.answer", answer, asked + timedelta(seconds=9))
        ids.append(f"{directory.name}/{task}.q1")
    return ids
