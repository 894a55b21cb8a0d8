"""Reaching another host with the operator's own ``ssh``, one shared connection per host.

Every command is the fleet file's ssh prefix (``["ssh"]`` unless it says otherwise), our
connection-sharing options, ``--``, the host, and the remote argv quoted for the remote
shell exactly once (``shlex.join``): the remote shell splits it back into the same words,
whatever spaces, quotes or ``$`` they hold. Host keys are checked as the operator's ssh
configuration says (``StrictHostKeyChecking`` is never turned off), ``BatchMode`` makes a
missing key or an unknown host an error instead of a prompt nobody sees, and nothing is
stored but the control sockets, in a private directory.

The first command to a host opens its master connection (``ControlMaster=auto``); the
others, the event stream and the actions alike, ride on it, and it lingers for
``ControlPersist`` seconds after the last one ends.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from runeconsole.core.errors import RuneError

PERSIST_SECONDS = 60
CONNECT_TIMEOUT = 10
SSH_FAILED = 255  # ssh's own exit status when the connection, not the command, failed


def control_dir() -> Path:
    """A directory only this user can enter, for the control sockets (``%C``: a hash of
    the host, port and user, short enough for a socket path)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    parent = Path(base) if base and Path(base).is_dir() else Path(tempfile.gettempdir())
    path = parent / f"runeconsole-ssh-{os.getuid()}"
    return private_dir(path)


def private_dir(path: Path) -> Path:
    """``path``, created 0700 if missing; refused if someone else could use it."""
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise RuneError(f"cannot make {path} for ssh control sockets: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise RuneError(f"{path} is not a directory of this user: ssh control sockets refused")
    if info.st_mode & 0o077:
        raise RuneError(f"{path} is open to other users (chmod 700 it): ssh control refused")
    return path


def remote_command(argv: Sequence[str]) -> str:
    """``argv`` as one string the remote shell splits back into exactly these words."""
    return shlex.join(argv)


class SshTransport:
    """Commands for one host, sharing one ssh connection."""

    def __init__(
        self,
        host: str,
        prefix: Sequence[str] = ("ssh",),
        *,
        sockets: Path | None = None,
        persist: int = PERSIST_SECONDS,
        connect_timeout: int = CONNECT_TIMEOUT,
    ) -> None:
        if not host or host.startswith("-"):
            raise RuneError(f"ssh host {host!r} refused: it would be read as an option")
        self.host = host
        self.prefix = list(prefix)
        self.sockets = sockets
        self.persist = persist
        self.connect_timeout = connect_timeout

    def options(self) -> list[str]:
        """The prefix and our options (the prefix's own ``-o`` come first, and win)."""
        sockets = self.sockets or control_dir()
        return [
            *self.prefix,
            "-o",
            "ControlMaster=auto",
            "-o",
            f"ControlPath={sockets}/%C",
            "-o",
            f"ControlPersist={self.persist}",
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={self.connect_timeout}",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
        ]

    def argv(self, remote: Sequence[str], *, tty: bool = False) -> list[str]:
        """The local argv that runs ``remote`` on the host."""
        return [*self.options(), "-t" if tty else "-T", "--", self.host, remote_command(remote)]

    def run(
        self, remote: Sequence[str], *, timeout: float = 60, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``remote`` and wait; a hang past ``timeout`` is a ``RuneError``."""
        with tempfile.TemporaryFile() as errors:
            process = self._start(remote, errors, stdin=subprocess.PIPE if input else None)
            try:
                out, _ = process.communicate(input.encode() if input else None, timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise RuneError(f"{self.host}: no answer within {timeout:g}s") from None
            return subprocess.CompletedProcess(
                process.args, process.returncode, out.decode(errors="replace"), read_back(errors)
            )

    def popen(self, remote: Sequence[str], errors: IO[bytes]) -> subprocess.Popen[bytes]:
        """Start ``remote`` with its output on a pipe (a stream to follow); what ssh and the
        command say on stderr goes to ``errors`` (see ``read_back``)."""
        return self._start(remote, errors)

    def _start(
        self, remote: Sequence[str], errors: IO[bytes], stdin: int | None = None
    ) -> subprocess.Popen[bytes]:
        # stderr goes to a file, not a pipe: the master connection that the first command
        # leaves behind (ControlPersist) keeps its stderr open, so a pipe would never end.
        try:
            return subprocess.Popen(
                self.argv(remote),
                stdin=subprocess.DEVNULL if stdin is None else stdin,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,  # the operator's ctrl-c reaches the console, not ssh
            )
        except FileNotFoundError:
            raise RuneError(
                f"{self.prefix[0]}: not installed (needed to reach {self.host})"
            ) from None

    def control(self, command: str) -> bool:
        """``ssh -O check|exit``: ask the master connection; True when it answered yes."""
        argv = [*self.options(), "-O", command, "--", self.host]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0

    def close(self) -> None:
        """End the shared connection (the commands riding on it end with it)."""
        self.control("exit")


def read_back(errors: IO[bytes]) -> str:
    """What was written to ``errors`` (the tail, as text)."""
    errors.seek(0)
    return errors.read()[-8192:].decode(errors="replace")


def failure_reason(returncode: int, stderr: str, host: str) -> str:
    """Why a remote command failed, in a line: ssh's own complaint, or the command's."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = lines[-1] if lines else ""
    if said.startswith("runeconsole: "):
        said = said[len("runeconsole: ") :]
    if returncode == SSH_FAILED:
        return f"ssh to {host} failed: {said or 'no reason given'}"
    if returncode == 127 or "command not found" in said or "No such file" in said:
        return f"runeconsole is not installed on {host} ({said or 'command not found'})"
    return said or f"exit status {returncode}"
