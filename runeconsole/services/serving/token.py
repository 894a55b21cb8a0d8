"""The access token of ``runeconsole serve``: random, created once, kept 0600.

The file is created complete in one exclusive step (``create_exclusive``), so two servers
started at once agree on one token. A token file that others may read, or that is not
ours, is refused rather than trusted: whoever can read it can open the console.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from pathlib import Path

from runeconsole.core.errors import RuneError
from runeconsole.core.files import create_exclusive

TOKEN_NAME = "serve-token"
TOKEN_BYTES = 32
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32,128}$")


def load_or_create_token(state_dir: Path) -> str:
    """The token kept in ``state_dir``; a new one the first time. ``RuneError`` when the
    file is readable by others, not the user's, or not a token."""
    path = state_dir / TOKEN_NAME
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileExistsError):
        create_exclusive(path, (secrets.token_urlsafe(TOKEN_BYTES) + "\n").encode(), 0o600)
    return _read(path)


def _read(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise RuneError(f"{path}: cannot read the access token: {exc.strerror}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RuneError(f"{path}: not a regular file; remove it and start again")
        if info.st_uid != os.getuid():
            raise RuneError(f"{path}: owned by another user; remove it and start again")
        if info.st_mode & 0o077:
            raise RuneError(
                f"{path}: others may read the access token (mode {stat.S_IMODE(info.st_mode):o});"
                " remove it (a new one is made) or chmod 600 it"
            )
        text = os.read(fd, 1024).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    if not _TOKEN.match(text):
        raise RuneError(f"{path}: not an access token; remove it and a new one is made")
    return text
