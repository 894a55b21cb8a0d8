"""Where question files are, how they are named, and the id each is known by.

Two layouts, both the Rune plugin's:

- the orchestrator's persistence files, ``tmp/.rune-signals/rune-work-{id}/`` with
  ``{task}.q{seq}.question`` and its ``{task}.q{seq}.answer`` (any ``rune-work-{id}``
  whose id is valid is read; the ones runeconsole creates are named as Rune names them,
  ``rune-work-YYYYMMDD-HHMMSS``). Id: ``rune-work-…/task-3.q1``.
- background workers' own files, when there is no session to ask:
  ``tmp/work/{timestamp}/questions/{task}.question``, answered by ``{task}.answer`` in the
  same directory. Id: ``work/{timestamp}/task-3``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from runeconsole.core.errors import InvalidInput
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.validate import ID_PATTERN, contained, id_subdirectories, validate_id

QUESTION, ANSWER = "question", "answer"
SIGNAL_DIR_PREFIX = "rune-work-"
SIGNALS, BACKGROUND = "signals", "background"
BACKGROUND_ID_PREFIX = "work/"
BACKGROUND_DIR = "questions"
FILE_NAME = re.compile(r"^([A-Za-z0-9_-]+)\.q([1-9][0-9]{0,8})\.(question|answer)$")
BACKGROUND_NAME = re.compile(r"^([A-Za-z0-9_-]+)\.(question|answer)$")
QUESTION_ID = re.compile(r"^([A-Za-z0-9_-]+)/([A-Za-z0-9_-]+)\.q([1-9][0-9]{0,8})$")
BACKGROUND_ID = re.compile(r"^work/([A-Za-z0-9_-]+)/([A-Za-z0-9_-]+)$")


class Where(NamedTuple):
    """A question file's place: its directory's name (the signal directory, or the
    background run's timestamp), task, sequence number and layout."""

    directory: str
    task_id: str
    seq: int
    layout: str

    @property
    def question_id(self) -> str:
        if self.layout == BACKGROUND:
            return f"{BACKGROUND_ID_PREFIX}{self.directory}/{self.task_id}"
        return f"{self.directory}/{self.task_id}.q{self.seq}"


def signal_dir_name(moment: datetime) -> str:
    """A new signal directory, named as Rune names it: ``rune-work-20260226-120000``."""
    return f"{SIGNAL_DIR_PREFIX}{moment.astimezone(UTC).strftime('%Y%m%d-%H%M%S')}"


class Locations:
    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.base = paths.question_signals

    # -- directories -----------------------------------------------------------------------

    def signal_dirs(self) -> list[Path]:
        return id_subdirectories(self.base)

    def background_dirs(self) -> list[Path]:
        return [
            run / BACKGROUND_DIR
            for run in id_subdirectories(self.paths.work)
            if (run / BACKGROUND_DIR).is_dir()
        ]

    def watch_dirs(self) -> list[Path]:
        """Every directory whose changes can add or answer a question."""
        return [self.base, *self.signal_dirs(), self.paths.work, *self.background_dirs()]

    def is_background(self, directory: Path) -> bool:
        return directory.name == BACKGROUND_DIR and directory.parent.parent == self.paths.work

    # -- files -----------------------------------------------------------------------------

    def question_files(self, directory: Path, *, unanswered: bool = False) -> list[Path]:
        """The question files of ``directory`` (``unanswered``: those without an answer
        beside them, told from the one listing: no file is looked at for it)."""
        pattern = BACKGROUND_NAME if self.is_background(directory) else FILE_NAME
        try:
            names = os.listdir(directory)
        except OSError:
            return []
        answered = {n for n in names if n.endswith(f".{ANSWER}")} if unanswered else set()
        return [
            directory / name
            for name in names
            if name.endswith(f".{QUESTION}")
            and pattern.fullmatch(name)
            and name[: -len(QUESTION)] + ANSWER not in answered
        ]

    def question_dirs(self) -> list[Path]:
        return [*self.signal_dirs(), *self.background_dirs()]

    def all_question_files(self) -> Iterator[Path]:
        for directory in self.question_dirs():
            yield from self.question_files(directory)

    def where(self, path: Path) -> Where:
        """The place of a ``.question`` (or ``.answer``) file; ``InvalidInput`` if it is
        neither layout's."""
        if self.is_background(path.parent):
            match = BACKGROUND_NAME.fullmatch(path.name)
            if match and ID_PATTERN.fullmatch(path.parent.parent.name):
                return Where(path.parent.parent.name, match.group(1), 1, BACKGROUND)
        else:
            match = FILE_NAME.fullmatch(path.name)
            if match:
                return Where(path.parent.name, match.group(1), int(match.group(2)), SIGNALS)
        raise InvalidInput(f"{path.name} is not a question file")

    def question_for(self, changed: Path) -> Path | None:
        """The ``.question`` a changed question or answer file belongs to, if any."""
        try:
            self.where(changed)
        except InvalidInput:
            return None
        return changed.with_suffix(f".{QUESTION}")

    def answer_path(self, question: Path) -> Path:
        return question.with_suffix(f".{ANSWER}")

    def path_of(self, question_id: str) -> Path:
        """The ``.question`` file an id names (ids are checked before any path is built)."""
        text = question_id.strip()
        background = BACKGROUND_ID.fullmatch(text)
        if background:
            run, task = background.groups()
            return self.paths.work / run / BACKGROUND_DIR / f"{task}.{QUESTION}"
        match = QUESTION_ID.fullmatch(text)
        if match is None:
            raise InvalidInput(
                f"question id {question_id!r}: expected SIGNAL_DIR/TASK.qSEQ or "
                "work/TIMESTAMP/TASK (as `runeconsole question list` shows)"
            )
        directory, task, seq = match.groups()
        return self.base / directory / f"{task}.q{int(seq)}.{QUESTION}"

    def resolve_signal_dir(self, given: str | None, now: datetime) -> Path:
        """``--signal-dir`` (a name or a path under ``tmp/.rune-signals``), else the newest
        ``rune-work-*`` one, else a new one named for ``now``."""
        root = self.paths.root
        if given:
            name = Path(given).name
            validate_id(name, "signal directory name")
            # a path (relative to the project root, as Rune writes it) must end up in ``base``
            if len(Path(given).parts) > 1 and contained(root, given).parent != contained(
                root, self.base
            ):
                raise InvalidInput(f"--signal-dir {given} must be directly under {self.base}")
            return self.base / name
        existing = [d for d in self.signal_dirs() if d.name.startswith(SIGNAL_DIR_PREFIX)]
        if existing:
            return max(existing, key=lambda d: (d.stat().st_mtime, d.name))
        return self.base / signal_dir_name(now)
