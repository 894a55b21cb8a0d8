"""Which transcript is an agent's, every transcript of a project, and which prompts in
them the operator sent (a ``say``, a review comment) rather than the user typed.

An agent's transcript: the one its hooks recorded (``claude.transcript_path`` in its
identity, ``.claude/state/identities/KEY.json``; ``claude.session_id`` names the session),
else the newest ``*.jsonl`` of its working directory's project directory: Claude Code
keeps a session under ``${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<cwd>/<session>.jsonl``,
``<cwd>`` with every character not a letter or a digit made ``-`` (a name longer than 200
characters is cut there and given a hash: found by that prefix). An identity replaced (a
respawn, a handoff) is kept under ``identities/history/``: an ended agent still has one.

The operator's prompts: what ``say`` sent (``record_sent`` keeps each text in
``.claude/state/conversations/sent/KEY.jsonl``) and the review comments sent as one prompt
(the ``prompt`` of a review record with the verdict ``changes_requested``,
``.claude/state/reviews/KEY/*.json``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from runeconsole.adapters import git
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import read_json_object
from runeconsole.core.paths import ProjectPaths, claude_config_dir
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services.project import Project

OPERATOR_KINDS = ("say", "review")
SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NAME_LIMIT = 200  # Claude Code cuts a project directory's name here (and adds a hash)
SENT_READ = 4 * 1024 * 1024  # the end of an outbox read (older sends are not looked for)
SENT_TEXT = 20_000  # characters of a sent text kept
_SPACE = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")


# -- the operator's prompts --------------------------------------------------------------


def normalized(text: str) -> str:
    """A prompt as compared: whitespace runs made one space, ends stripped (a pane's paste
    and Claude Code's record of it may differ in line breaks and trailing spaces)."""
    return _SPACE.sub(" ", text).strip()


class OperatorPrompts:
    """The texts the console sent to one agent, each with how (``say`` or ``review``): a
    prompt in its transcript equal to one of them (normalized) is the operator's."""

    def __init__(self, sent: Iterable[tuple[str, str]] = ()) -> None:
        self._sent: dict[str, str] = {}
        for text, how in sent:
            self.add(text, how)

    def add(self, text: str, how: str) -> None:
        key = normalized(text)
        if key:
            self._sent.setdefault(key, how)

    def which(self, prompt: str) -> str | None:
        """``"say"`` / ``"review"`` when the operator sent ``prompt``; ``None``: not sent here."""
        if not self._sent:
            return None
        return self._sent.get(normalized(prompt))

    def __len__(self) -> int:
        return len(self._sent)

    @classmethod
    def of(cls, project: Project, key: str) -> OperatorPrompts:
        """What the console sent to agent ``key``: its ``say``s and its reviews' prompts."""
        key = validate_name(key, "agent key")
        found = cls()
        for text in _review_prompts(project.paths.reviews / key):
            found.add(text, "review")  # first: a review's prompt is sent by a say too
        for text in _sent_texts(sent_path(project.paths, key)):
            found.add(text, "say")
        return found


def sent_path(paths: ProjectPaths, key: str) -> Path:
    return paths.state / "conversations" / "sent" / f"{validate_name(key, 'agent key')}.jsonl"


def record_sent(project: Project, key: str, text: str, how: str = "say") -> None:
    """Keep a text the console sent to agent ``key`` (one line appended), so its
    conversation shows it as the operator's. A failure to keep it is not the send's."""
    if how not in OPERATOR_KINDS:
        raise InvalidInput(f"sent how? {how!r} (one of {', '.join(OPERATOR_KINDS)})")
    path = sent_path(project.paths, key)
    line = {"at": iso_z(project.clock.now()), "how": how, "text": text[:SENT_TEXT]}
    data = json.dumps(line, ensure_ascii=False).encode() + b"\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(
            path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644
        )
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError:
        return


def _sent_texts(path: Path) -> Iterator[str]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - SENT_READ)
        os.lseek(fd, start, os.SEEK_SET)
        data = os.read(fd, size - start)
    except OSError:
        return
    finally:
        os.close(fd)
    for line in data.split(b"\n"):
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict) and isinstance(entry.get("text"), str):
            yield entry["text"]


def _review_prompts(folder: Path) -> Iterator[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            review = read_json_object(folder / name)
        except UnreadableFile:
            continue
        prompt = review.get("prompt")
        if isinstance(prompt, str) and prompt.strip():
            yield prompt


# -- where transcripts are ----------------------------------------------------------------


def projects_dir() -> Path:
    """``${CLAUDE_CONFIG_DIR:-~/.claude}/projects``: a directory per working directory."""
    return claude_config_dir() / "projects"


def project_dir_name(cwd: Path | str) -> str:
    """The name Claude Code gives the directory of a working directory's sessions (cut at
    200 characters; Claude Code then adds ``-<hash>``, found by ``project_dirs``)."""
    return _NOT_ALNUM.sub("-", os.fspath(cwd))


def project_dirs(cwd: Path | str) -> list[Path]:
    """The directories that hold the sessions run in ``cwd`` (none, or one)."""
    name = project_dir_name(cwd)
    base = projects_dir()
    if len(name) <= NAME_LIMIT:
        found = base / name
        return [found] if found.is_dir() else []
    prefix = name[:NAME_LIMIT] + "-"
    try:
        return sorted(
            base / entry
            for entry in os.listdir(base)
            if entry.startswith(prefix) and (base / entry).is_dir()
        )
    except OSError:
        return []


def session_uuid(value: str) -> str:
    """``value`` if it is a session id (a UUID), lower-cased; ``InvalidInput`` otherwise."""
    if not isinstance(value, str) or not SESSION_ID.fullmatch(value.lower()):
        raise InvalidInput(f"session {value!r} is not a UUID (Claude Code's ids are UUIDs)")
    return value.lower()


def _transcripts_in(folder: Path) -> list[Path]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    return [
        Path(entry.path)
        for entry in entries
        if entry.name.endswith(".jsonl") and SESSION_ID.fullmatch(entry.name[: -len(".jsonl")])
        if entry.is_file(follow_symlinks=False)
    ]


def _newest(paths: Iterable[Path]) -> Path | None:
    best: tuple[int, str, Path] | None = None
    for path in paths:
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            continue
        if best is None or (stamp, path.name) > best[:2]:
            best = (stamp, path.name, path)
    return best[2] if best else None


def identity(paths: ProjectPaths, key: str) -> dict[str, Any] | None:
    """The agent's identity (``None``: none), else the newest replaced one kept for it."""
    key = validate_name(key, "agent key")
    try:
        return read_json_object(paths.identities / f"{key}.json")
    except UnreadableFile:
        pass
    kept: list[tuple[str, dict[str, Any]]] = []
    try:
        names = os.listdir(paths.identity_history)
    except OSError:
        return None
    for name in names:
        if not name.endswith(".json") or not name.startswith(key):
            continue
        try:
            fields = read_json_object(paths.identity_history / name)
        except UnreadableFile:
            continue
        if f"{fields.get('role')}-{fields.get('name')}" == key:
            kept.append((name, fields))
    return max(kept, key=lambda pair: pair[0])[1] if kept else None


def _working_dirs(fields: dict[str, Any], root: Path) -> list[str]:
    claude = fields.get("claude")
    claude = claude if isinstance(claude, dict) else {}
    found = [claude.get("cwd"), fields.get("worktree_path"), fields.get("worktree")]
    dirs = [d for d in found if isinstance(d, str) and os.path.isabs(d)]
    return list(dict.fromkeys([*dirs, os.fspath(root)]))


def transcript_for(project: Project, key: str, session: str | None = None) -> Path:
    """Agent ``key``'s transcript (of ``session``, when given): the one its hooks recorded,
    else the newest of its working directory's. ``RuneError`` saying why when none."""
    fields = identity(project.paths, key)
    if fields is None:
        raise RuneError(f"no agent {key} (no identity in {project.paths.identities})")
    claude = fields.get("claude")
    claude = claude if isinstance(claude, dict) else {}
    recorded = claude.get("transcript_path")
    recorded_path = (
        Path(recorded) if isinstance(recorded, str) and os.path.isabs(recorded) else None
    )
    folders = [d for cwd in _working_dirs(fields, project.root) for d in project_dirs(cwd)]
    if recorded_path is not None:
        folders.insert(0, recorded_path.parent)
    if session is not None:
        wanted = session_uuid(session)
        for folder in dict.fromkeys(folders):
            path = folder / f"{wanted}.jsonl"
            if path.is_file():
                return path
        raise RuneError(f"{key}: no transcript of session {wanted} (looked in {_listed(folders)})")
    if recorded_path is not None and recorded_path.is_file():
        return recorded_path
    newest = _newest(p for folder in dict.fromkeys(folders) for p in _transcripts_in(folder))
    if newest is None:
        why = f"its recorded {recorded_path} is gone; " if recorded_path is not None else ""
        raise RuneError(f"{key}: no conversation found ({why}looked in {_listed(folders)})")
    return newest


def _listed(folders: list[Path]) -> str:
    unique = list(dict.fromkeys(folders))
    if not unique:
        return f"{projects_dir()}: no directory of its working directory"
    return ", ".join(map(str, unique[:3])) + (
        f" and {len(unique) - 3} more" if len(unique) > 3 else ""
    )


def worktrees(root: Path) -> list[Path]:
    """The project's git worktrees (its root first) and ``.claude/worktrees/*``."""
    found = [root]
    try:
        listed = git.run_git(["worktree", "list", "--porcelain"], root, timeout=10, check=False)
        if listed.returncode == 0:
            found += [
                Path(line[len("worktree ") :])
                for line in listed.stdout.splitlines()
                if line.startswith("worktree ")
            ]
    except (OSError, subprocess.SubprocessError, RuneError):
        pass
    try:
        claude_worktrees = root / ".claude" / "worktrees"
        found += sorted(p for p in claude_worktrees.iterdir() if p.is_dir())
    except OSError:
        pass
    return list(dict.fromkeys(found))


def sessions_of(project: Project) -> list[Path]:
    """Every session transcript of the project (not the subagents' files beside them): its
    root's and its worktrees' project directories, and the directories its agents'
    identities name (their working directories and recorded transcripts)."""
    dirs: list[Path] = []
    for tree in worktrees(project.root):
        dirs += project_dirs(tree)
    for fields in _identities(project.paths):
        claude = fields.get("claude")
        recorded = claude.get("transcript_path") if isinstance(claude, dict) else None
        if isinstance(recorded, str) and os.path.isabs(recorded):
            dirs.append(Path(recorded).parent)
        for cwd in _working_dirs(fields, project.root):
            dirs += project_dirs(cwd)
    found = {p for folder in dict.fromkeys(dirs) for p in _transcripts_in(folder)}
    return sorted(found)


def _identities(paths: ProjectPaths) -> Iterator[dict[str, Any]]:
    for folder in (paths.identities, paths.identity_history):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if name.endswith(".json") and not name.startswith("."):
                try:
                    yield read_json_object(folder / name)
                except UnreadableFile:
                    continue
