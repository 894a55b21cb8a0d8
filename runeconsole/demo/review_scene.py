"""The review part of the fixed demo scene: two agents with real work in worktrees of
their own, one idle and ready for review (with a comment waiting to be sent), one still
busy. Commits carry fixed dates and authors, so on a base made the same way
(``fixed_repo``) every commit id reads the same on every run (screenshots, snapshots)."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters.git import run_git
from runeconsole.core.files import atomic_write_bytes
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.service import Reviews

WHEN = "2026-02-26T11:30:00+00:00"
FIXED = {
    "GIT_AUTHOR_NAME": "worker",
    "GIT_AUTHOR_EMAIL": "worker@fleet.invalid",
    "GIT_COMMITTER_NAME": "worker",
    "GIT_COMMITTER_EMAIL": "worker@fleet.invalid",
    "GIT_AUTHOR_DATE": WHEN,
    "GIT_COMMITTER_DATE": WHEN,
}
READY_AGENT, BUSY_AGENT = "worker-tokens", "orchestrator-auth"

TOKENS_BEFORE = '''\
"""Access tokens for the API."""

import hashlib
import time

LIFETIME = 3600


def issue(user_id: str, secret: str) -> str:
    """A token for ``user_id``, valid for an hour."""
    expires = int(time.time()) + LIFETIME
    digest = hashlib.sha256(f"{user_id}:{expires}:{secret}".encode()).hexdigest()
    return f"{user_id}.{expires}.{digest}"


def check(token: str, secret: str) -> bool:
    user_id, expires, digest = token.split(".")
    expected = hashlib.sha256(f"{user_id}:{expires}:{secret}".encode()).hexdigest()
    return digest == expected
'''
TOKENS_AFTER = '''\
"""Access tokens for the API: signed, with an expiry, refreshed before they lapse."""

import hashlib
import hmac
import time

LIFETIME = 3600
REFRESH_WITHIN = 300  # seconds before expiry when a refresh is allowed


def _sign(user_id: str, expires: int, secret: str) -> str:
    message = f"{user_id}:{expires}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def issue(user_id: str, secret: str, now: float | None = None) -> str:
    """A token for ``user_id``, valid for an hour."""
    expires = int(now if now is not None else time.time()) + LIFETIME
    return f"{user_id}.{expires}.{_sign(user_id, expires, secret)}"


def check(token: str, secret: str, now: float | None = None) -> bool:
    """Whether ``token`` is ours and has not expired."""
    try:
        user_id, expires, digest = token.split(".")
    except ValueError:
        return False
    if int(expires) < (now if now is not None else time.time()):
        return False
    return hmac.compare_digest(digest, _sign(user_id, int(expires), secret))


def refresh(token: str, secret: str, now: float | None = None) -> str | None:
    """A new token for a valid one that expires within ``REFRESH_WITHIN`` seconds."""
    if not check(token, secret, now):
        return None
    user_id, expires, _ = token.split(".")
    if int(expires) - (now if now is not None else time.time()) > REFRESH_WITHIN:
        return token
    return issue(user_id, secret, now)
'''
TOKENS_TEST = """\
from api.tokens import check, issue, refresh


def test_a_token_checks_until_it_expires():
    token = issue("ada", "s3cret", now=1000)
    assert check(token, "s3cret", now=1000)
    assert not check(token, "s3cret", now=1000 + 3601)


def test_a_token_near_its_end_is_refreshed():
    token = issue("ada", "s3cret", now=1000)
    assert refresh(token, "s3cret", now=1000 + 3500) != token
"""
BASE_FILES = {
    "api/tokens.py": TOKENS_BEFORE,
    "api/session.py": "SESSIONS: dict[str, str] = {}\n",
    "docs/auth.md": "# Auth\n\nTokens last an hour.\n",
}
# key -> (branch, commits [(message, files)], files written but not committed (new ones
# are untracked), files removed from the index)
WORK: dict[str, tuple[str, list[tuple[str, dict[str, str]]], dict[str, str], list[str]]] = {
    READY_AGENT: (
        "agent/worker-tokens",
        [
            ("tokens: sign with HMAC, compare in constant time", {"api/tokens.py": TOKENS_AFTER}),
            ("tokens: tests for expiry and refresh", {"tests/test_tokens.py": TOKENS_TEST}),
        ],
        {
            "docs/auth.md": "# Auth\n\nTokens last an hour; refresh within 5 minutes of the end.\n",
            "notes/refresh.md": "Refresh is opt-in: clients call it before expiry.\n",
        },
        ["api/session.py"],
    ),
    BUSY_AGENT: (
        "agent/orchestrator-auth",
        [("auth: plan the login flow", {"docs/login-flow.md": "# Login\n\n1. form\n2. token\n"})],
        {"api/login.py": "def login(form):\n    raise NotImplementedError\n"},
        [],
    ),
}
COMMENT = ("api/tokens.py", 28, "A token with a non-numeric expiry still raises here.")


def git(args: list[str], where: Path) -> None:
    run_git(args, where, env=FIXED)


def fixed_repo(root: Path) -> None:
    """A repository whose first commit is always the same one (fixed date and author)."""
    root.mkdir(parents=True, exist_ok=True)
    git(["init", "--quiet", "--initial-branch=main"], root)
    git(["config", "user.email", FIXED["GIT_AUTHOR_EMAIL"]], root)
    git(["config", "user.name", FIXED["GIT_AUTHOR_NAME"]], root)
    git(["commit", "--quiet", "--allow-empty", "-m", "initial commit"], root)


def _write(where: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        atomic_write_bytes(where / name, text.encode())


def build_reviews(root: Path, registry: Registry | None = None) -> None:
    """The base files on main, then each agent's worktree with its work in it (committed
    and not), its identity pointing there; a comment waiting on the ready one's review."""
    registry = registry or Registry(Project(root))
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    kept = exclude.read_text() if exclude.exists() else ""
    exclude.write_text(kept + ".worktrees/\n.claude/\n")
    _write(root, BASE_FILES)
    git(["add", "--", *BASE_FILES], root)
    git(["commit", "--quiet", "-m", "api: tokens and sessions"], root)
    for key, (branch, commits, uncommitted, removed) in WORK.items():
        relative = f".worktrees/{key}"
        worktree = (root / relative).absolute()  # git resolves a relative one elsewhere
        git(["worktree", "add", "--quiet", "-b", branch, str(worktree), "main"], root)
        for message, files in commits:
            _write(worktree, files)
            git(["add", "--", *files], worktree)
            git(["commit", "--quiet", "-m", message], worktree)
        _write(worktree, uncommitted)
        for name in removed:
            git(["rm", "--quiet", "--", name], worktree)
        registry.update(key, {"worktree": relative, "worktree_path": relative})
    file, line, text = COMMENT
    Reviews(registry.project, registry=registry).comment(READY_AGENT, text, file=file, line=line)
