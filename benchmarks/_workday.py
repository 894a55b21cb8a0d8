"""The rest of a working day beside the hooks: an operator who answers questions and
decides permission requests through the CLI (most of them; some are left to run out), and
branches queued and processed by the merge queue.

The operator looks once a second (the services read the files as the console does) and
acts with ``runeconsole question answer`` / ``permissions decide`` as processes. Every
``queue_every`` seconds a branch with one commit is made and queued
(``merge-queue add``), and the queue is processed (``merge-queue process --all``, the
test command ``true``).
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.claude.questions import answers
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import Questions

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.support.merge_queue import commit_on  # noqa: E402


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runeconsole", *args, "--root", str(root)],
        capture_output=True, text=True, timeout=300, check=False, cwd=root,
    )  # fmt: skip


@dataclass
class Acts:
    """What the operator and the queue did (and what failed)."""

    answered: list[str] = field(default_factory=list)
    decided: dict[str, str] = field(default_factory=dict)  # request id -> allow | deny
    left: set[str] = field(default_factory=set)  # left to run out on purpose
    refused: list[str] = field(default_factory=list)  # the CLI said no (too late, …)
    queued: list[str] = field(default_factory=list)
    processed: int = 0
    errors: list[str] = field(default_factory=list)


class Operator:
    def __init__(self, root: Path, *, answer_share: float = 0.8, seed: int = 11) -> None:
        self.root = root
        self.project = Project(root, strict=False)
        self.random = random.Random(seed)
        self.answer_share = answer_share
        self.acts = Acts()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, queue_every: float) -> None:
        for target, args in ((self._answer, ()), (self._queue, (queue_every,))):
            thread = threading.Thread(target=target, args=args, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)

    # -- questions and permission requests ---------------------------------------------------

    def _answer(self) -> None:
        seen: set[str] = set()
        while not self._stop.wait(1.0):
            try:
                self._look(seen)
            except Exception as exc:  # noted, never the end of the run
                self.acts.errors.append(f"operator: {type(exc).__name__}: {exc}")

    def _look(self, seen: set[str]) -> None:
        for request in Permissions(self.project).pending():
            if request.id in seen:
                continue
            seen.add(request.id)
            if self.random.random() >= self.answer_share:
                self.acts.left.add(request.id)
                continue
            behavior = "allow" if self.random.random() < 0.7 else "deny"
            done = cli(self.root, "permissions", "decide", request.id, f"--{behavior}")
            if done.returncode == 0:
                self.acts.decided[request.id] = behavior
            else:
                self.acts.refused.append(f"{request.id}: {done.stderr.strip()}")
        for question in Questions(self.project).list():
            if not answers.is_relay(question) or question.id in seen:
                continue
            seen.add(question.id)
            if self.random.random() >= self.answer_share:
                self.acts.left.add(question.id)
                continue
            done = cli(self.root, "question", "answer", question.id, "--option", "B")
            if done.returncode == 0:
                self.acts.answered.append(question.id)
            else:
                self.acts.refused.append(f"{question.id}: {done.stderr.strip()}")

    # -- the merge queue -----------------------------------------------------------------------

    def _queue(self, every: float) -> None:
        number = 0
        while not self._stop.wait(every):
            number += 1
            branch = f"feat/soak-{number}"
            try:
                commit_on(self.root, branch, {f"soak/{number}.txt": f"change {number}\n"})
                self._run("merge-queue", "add", "--branch", branch)
                self.acts.queued.append(branch)
                self._run("merge-queue", "process", "--all")
                self.acts.processed += 1
            except Exception as exc:
                self.acts.errors.append(f"queue: {type(exc).__name__}: {exc}")

    def drain_queue(self) -> None:
        """Whatever is still queued, processed (at the end of the run)."""
        self._run("merge-queue", "process", "--all")

    def _run(self, *args: str) -> None:
        done = cli(self.root, *args)
        if done.returncode != 0:
            self.acts.errors.append(f"{' '.join(args)}: {done.stderr.strip()[:300]}")
