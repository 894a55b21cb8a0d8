"""Git talking to a remote, for the merge queue: fetch, push, delete a branch with a
lease, ask where a branch is. Never waits on a person: no terminal prompt
(``GIT_TERMINAL_PROMPT=0``), SSH in ``BatchMode`` with a connect timeout, no askpass,
stdin closed, and its own session so a timeout ends ssh with git (``subprocess.run``
would kill git alone and then wait on the pipe its ssh child still holds).

A remote that cannot be reached (a path gone, a host down, a key refused, a timeout) is
a ``RemoteUnreachable``: the queue waits for it and tries again. Anything else git
refuses is a ``RuneError``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from runeconsole.adapters.git import run_git
from runeconsole.core.errors import RuneError

CONNECT_TIMEOUT = 10  # seconds SSH may take to connect
SSH_OPTIONS = f"-o BatchMode=yes -o ConnectTimeout={CONNECT_TIMEOUT}"
# A remote name as ``git remote add`` takes it (no option, no path, no refspec).
_REMOTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
# What git says when it could not talk to the remote at all (not a refusal of ours).
_UNREACHABLE = re.compile(
    r"could not read from remote repository|does not appear to be a git repository"
    r"|could not resolve host|connection (refused|timed out|closed)|permission denied"
    r"|host key verification failed|no route to host|network is unreachable"
    r"|unable to access|the remote end hung up|early eof|broken pipe"
    r"|operation timed out|connection reset",
    re.IGNORECASE,
)
_NO_REMOTE_REF = re.compile(r"couldn't find remote ref|no such ref", re.IGNORECASE)
PUSHED, REJECTED, REFUSED = "pushed", "rejected", "refused"


class RemoteUnreachable(RuneError):
    """The remote could not be reached; ``reason`` is git's own last line."""

    def __init__(self, remote: str, reason: str) -> None:
        super().__init__(f"{remote} is unreachable: {reason}")
        self.remote = remote
        self.reason = reason


class NoRemoteBranch(RuneError):
    """The remote answered, and has no such branch."""


@dataclass(frozen=True)
class PushResult:
    """``PUSHED``; ``REJECTED`` (not a fast-forward: the branch moved); ``REFUSED`` (the
    remote declined it: a hook, a protected branch). ``detail``: git's reason."""

    kind: str
    detail: str = ""


def valid_remote_name(name: object) -> bool:
    return isinstance(name, str) and bool(_REMOTE_NAME.match(name))


def quiet_env(repo: Path) -> dict[str, str]:
    """Our environment, with every way git or ssh could ask a person switched off. The
    ssh command the user chose (``GIT_SSH_COMMAND``, else ``core.sshCommand``) is kept,
    with ``BatchMode`` added when it is ssh itself; ``GIT_SSH`` (a program) is left."""
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["SSH_ASKPASS_REQUIRE"] = "never"
    env["GCM_INTERACTIVE"] = "never"
    env.pop("GIT_ASKPASS", None)
    env.pop("SSH_ASKPASS", None)
    if "GIT_SSH" in env and "GIT_SSH_COMMAND" not in env:
        return env
    chosen = env.get("GIT_SSH_COMMAND") or _configured_ssh(repo) or "ssh"
    if chosen.split()[:1] == ["ssh"]:
        chosen = f"{chosen} {SSH_OPTIONS}"
    env["GIT_SSH_COMMAND"] = chosen
    return env


def run_remote(
    repo: Path, remote: str, args: list[str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` that talks to ``remote``; returns git's result whatever its exit code,
    or raises ``RemoteUnreachable`` on a timeout (everything it started is ended)."""
    argv = ["git", "-c", "core.askPass=", "-c", "credential.interactive=false", *args]
    try:
        process = subprocess.Popen(
            argv,
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=quiet_env(repo),
            start_new_session=True,  # no terminal to prompt on; the group ends on a timeout
        )
    except FileNotFoundError:
        raise RuneError("git is not installed or not on PATH") from None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise RemoteUnreachable(remote, f"no answer within {timeout:g}s") from None
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _configured_ssh(repo: Path) -> str | None:
    """``core.sshCommand`` as the repository sets it, if it does."""
    result = run_git(["config", "--get", "core.sshCommand"], repo, timeout=10, check=False)
    return result.stdout.strip() or None if result.returncode == 0 else None


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (result.stderr or result.stdout).splitlines()]
    lines = [line.removeprefix("fatal: ").removeprefix("error: ") for line in lines if line]
    return lines[-1] if lines else f"git exited {result.returncode}"


def _failure(remote: str, result: subprocess.CompletedProcess[str], what: str) -> RuneError:
    """What a failed command that talks to ``remote`` means: the remote unreachable, or
    git refusing (``what`` says which command)."""
    text = f"{result.stderr}\n{result.stdout}"
    detail = _last_line(result)
    if _UNREACHABLE.search(text):
        reasons = [line for line in text.splitlines() if _UNREACHABLE.search(line)]
        first = reasons[0].strip().removeprefix("fatal: ") if reasons else detail
        return RemoteUnreachable(remote, first)
    if _NO_REMOTE_REF.search(text):
        return NoRemoteBranch(f"{remote} has no {what}: {detail}")
    return RuneError(f"git {what} from {remote} failed: {detail}")


def remote_url(repo: Path, remote: str) -> str | None:
    """Where ``remote`` points (``git remote get-url``), or ``None`` if it is no remote."""
    result = run_git(["remote", "get-url", remote], repo, timeout=10, check=False)
    return result.stdout.strip() or None if result.returncode == 0 else None


def tracking_ref(remote: str, branch: str) -> str:
    return f"refs/remotes/{remote}/{branch}"


def fetch(repo: Path, remote: str, branches: list[str], *, timeout: float) -> None:
    """Each of ``branches`` fetched into its remote-tracking ref (forced: the remote's word
    is the truth), whatever refspec the remote is configured with."""
    specs = [f"+refs/heads/{b}:{tracking_ref(remote, b)}" for b in branches]
    args = ["fetch", "--quiet", "--no-tags", "--no-recurse-submodules", remote, *specs]
    result = run_remote(repo, remote, args, timeout)
    if result.returncode != 0:
        raise _failure(remote, result, f"branch {' '.join(branches)}")


def push(repo: Path, remote: str, commit: str, branch: str, *, timeout: float) -> PushResult:
    """``commit`` pushed to ``remote``'s ``branch`` as a fast-forward (never forced)."""
    spec = f"{commit}:refs/heads/{branch}"
    result = run_remote(repo, remote, ["push", "--porcelain", remote, spec], timeout)
    flag, detail = _porcelain(result.stdout, branch)
    if result.returncode == 0 and flag in (" ", "=", "*"):
        return PushResult(PUSHED, detail)
    if flag == "!":
        if detail.startswith("[rejected]"):
            return PushResult(REJECTED, detail)
        return PushResult(REFUSED, detail)
    raise _failure(remote, result, f"push of {branch}")


def delete_branch(
    repo: Path, remote: str, branch: str, expected: str, *, timeout: float
) -> PushResult:
    """``branch`` deleted on ``remote`` only if it still holds ``expected`` (a lease)."""
    args = ["push", "--porcelain", f"--force-with-lease=refs/heads/{branch}:{expected}"]
    result = run_remote(repo, remote, [*args, remote, f":refs/heads/{branch}"], timeout)
    flag, detail = _porcelain(result.stdout, branch)
    if result.returncode == 0 and flag in ("-", " "):
        return PushResult(PUSHED, detail)
    if flag == "!":
        return PushResult(REJECTED if "stale info" in detail else REFUSED, detail)
    raise _failure(remote, result, f"deletion of {branch}")


def _porcelain(stdout: str, branch: str) -> tuple[str, str]:
    """The flag and summary of ``branch``'s line in ``push --porcelain``'s output."""
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].endswith(f":refs/heads/{branch}"):
            return parts[0][:1], parts[2].strip()
    return "", ""


def counts(repo: Path, left: str, right: str) -> tuple[int, int] | None:
    """Commits only in ``left``, and only in ``right`` (``None`` if either is missing)."""
    args = ["rev-list", "--left-right", "--count", f"{left}...{right}"]
    result = run_git(args, repo, timeout=30, check=False)
    parts = result.stdout.split()
    if result.returncode != 0 or len(parts) != 2:
        return None
    return int(parts[0]), int(parts[1])
