"""A worker question written as Rune writes it, for tests that need one on disk."""

from __future__ import annotations

import json
from pathlib import Path

QUESTION_DIR = "tmp/.rune-signals/rune-work-20261123-120000"


def ask(root: Path, task: str = "task-1", text: str = "Which parser?") -> Path:
    directory = root / QUESTION_DIR
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{task}.q1.question"
    body = {"task_id": task, "question": text, "urgency": "blocking", "options": ["A", "B"]}
    path.write_text(json.dumps({**body, "context": "", "seq": 1}))
    return path
