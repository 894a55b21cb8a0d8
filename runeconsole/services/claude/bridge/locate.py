"""Which project and which agent a hook event belongs to.

The project root is ``$RUNECONSOLE_ROOT`` (set for agents started by ``spawn``), else the
git checkout of ``$CLAUDE_PROJECT_DIR`` (or the event's ``cwd``); a linked worktree
(``.git`` is a file naming ``<root>/.git/worktrees/<name>``) belongs to its main checkout,
where the console runs. Outside any git checkout there is no root and nothing is
written (a user-wide install must not litter every directory Claude Code is opened in).

The agent is ``$RUNECONSOLE_AGENT`` (``spawn`` sets it), else, for a background session
``spawn --background`` started, the agent it registered under the session's name, else
role ``claude`` and a name made of the project directory's name and the first 8
characters of the session id (a background session's short id).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from runeconsole.core.files import parse_json_object, read_bytes
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.validate import ID_PATTERN, MAX_ID_LENGTH
from runeconsole.services.claude.bridge.payload import HookInputError, HookPayload

JOB_DIR_ENV = "CLAUDE_JOB_DIR"  # set by Claude Code for a background session's hooks
ROOT_ENV = "RUNECONSOLE_ROOT"
AGENT_ENV = "RUNECONSOLE_AGENT"
AGENT_KEY_ENV = "RUNECONSOLE_AGENT_KEY"  # what `spawn` set before it also set AGENT_ENV
ROLE = "claude"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_DIR_CHARS = 40
_GITDIR_MAX = 4096


def project_root(cwd: str | None, environ: Mapping[str, str]) -> Path | None:
    """The root for an event whose ``cwd`` is given (``None`` for an unreadable event)."""
    given = environ.get(ROOT_ENV)
    if given and os.path.isabs(given) and os.path.isdir(given):
        return Path(given)
    for start in (environ.get("CLAUDE_PROJECT_DIR"), cwd):
        if start and os.path.isabs(start) and os.path.isdir(start):
            found = _checkout_of(os.path.realpath(start))
            if found is not None:
                return Path(found)
    return None


def _checkout_of(path: str) -> str | None:
    while True:
        dotgit = os.path.join(path, ".git")
        if os.path.isdir(dotgit):
            return path
        if os.path.isfile(dotgit):
            return _main_checkout(path, dotgit) or path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _main_checkout(worktree: str, dotgit: str) -> str | None:
    """``<root>`` for a ``.git`` file reading ``gitdir: <root>/.git/worktrees/<name>``."""
    try:
        with open(dotgit, "rb") as handle:
            text = handle.read(_GITDIR_MAX).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(worktree, text[len("gitdir:") :].strip()))
    common = os.path.dirname(os.path.dirname(gitdir))  # <root>/.git
    if os.path.basename(os.path.dirname(gitdir)) != "worktrees" or not os.path.isdir(common):
        return None
    if os.path.basename(common) != ".git":
        return None
    return os.path.dirname(common)


def _safe(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-")


def derived_key(payload: HookPayload, environ: Mapping[str, str]) -> tuple[str, str]:
    """``(role, name)`` for a session nobody named: ``claude`` and ``{dir}-{session[:8]}``.

    The directory is ``$CLAUDE_PROJECT_DIR``'s (fixed for the session, where the event's
    ``cwd`` follows every ``cd``)."""
    session = _safe(payload.session_id or "")[:8]
    if not session:
        raise HookInputError("no usable session_id in the payload")
    where = environ.get("CLAUDE_PROJECT_DIR") or payload.cwd or ""
    directory = _safe(os.path.basename(where.rstrip("/")))[:_DIR_CHARS] or "session"
    return ROLE, f"{directory}-{session}"


def _split(key: str) -> tuple[str, str] | None:
    if "-" in key and len(key) <= MAX_ID_LENGTH and ID_PATTERN.fullmatch(key):
        role, name = key.split("-", 1)
        if role and name:
            return role, name
    return None


def agent_key(
    payload: HookPayload, environ: Mapping[str, str], paths: ProjectPaths | None = None
) -> tuple[str, str]:
    """``(role, name)`` of the agent: ``$RUNECONSOLE_AGENT`` when it names one properly,
    else the agent ``spawn --background`` registered for this background session."""
    named = _split(environ.get(AGENT_ENV) or environ.get(AGENT_KEY_ENV) or "")
    if named is not None:
        return named
    spawned = _spawned(payload, environ, paths) if paths is not None else None
    return spawned or derived_key(payload, environ)


BOUND_DIR = "background"  # in the bridge's state: one file per bound session, its agent


def bound_path(paths: ProjectPaths, short_id: str) -> str:
    return os.path.join(paths.claude_bridge, BOUND_DIR, short_id)


def bind(paths: ProjectPaths, short_id: str, key: str) -> None:
    """Remember that background session ``short_id`` is agent ``key`` (written once)."""
    from runeconsole.core.files import create_exclusive

    path = paths.inside(Path(bound_path(paths, short_id)))
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        create_exclusive(path, key.encode())


def _spawned(
    payload: HookPayload, environ: Mapping[str, str], paths: ProjectPaths
) -> tuple[str, str] | None:
    """The agent ``spawn --background`` started for this background session: its daemon
    passes no environment of ours, so the session is bound to the agent by its short id
    (``bind``, when ``claude --bg`` said it), or, for an event that comes before that, by
    its name (``session_title``, on SessionStart and UserPromptSubmit), which is the
    agent's key: then the identity must be active, started in the background by
    runeconsole and of no other session yet, and the binding is written for the events
    that carry no name."""
    job = os.path.basename(environ.get(JOB_DIR_ENV, "").rstrip("/"))
    if not job or not ID_PATTERN.fullmatch(job):
        return None
    try:
        with open(bound_path(paths, job), "rb") as handle:
            return _split(handle.read(MAX_ID_LENGTH + 1).decode("ascii", "replace"))
    except OSError:
        pass
    title = payload.text("session_title")
    named = _split(title) if title else None
    if named is None:
        return None
    try:
        path = paths.identities / f"{title}.json"
        fields = parse_json_object(path, read_bytes(path, follow_symlinks=False))
    except Exception:
        return None
    metadata = fields.get("metadata")
    if fields.get("status") != "active" or not isinstance(metadata, dict):
        return None
    if metadata.get("background") is not True:
        return None
    if fields.get("background_id") not in (None, job):
        return None
    bind(paths, job, f"{named[0]}-{named[1]}")
    return named
