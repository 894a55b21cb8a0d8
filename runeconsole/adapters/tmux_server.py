"""libtmux's server with every command under a timeout, for ``adapters/tmux.py``.

A module of its own because libtmux costs about 80 ms to import: ``Tmux`` makes its
server, and imports this, at its first command, so the console paints and a command that
never asks tmux ends without it.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

import libtmux

from runeconsole.core.errors import RuneError


class TimedCmd:
    """What ``libtmux.common.tmux_cmd`` offers (cmd, stdout, stderr, returncode), with a timeout."""

    def __init__(self, args: Sequence[str], timeout: float, stdin: str | None = None) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            raise RuneError(
                "tmux is not installed or not on PATH; install tmux to supervise agents"
            )
        self.cmd = [tmux, *args]
        try:
            result = subprocess.run(
                self.cmd,
                capture_output=True,
                text=True,
                errors="backslashreplace",
                timeout=timeout,
                check=False,
                input=stdin,
                stdin=subprocess.DEVNULL if stdin is None else None,
            )
        except subprocess.TimeoutExpired:
            raise RuneError(
                f"tmux {' '.join(args)} took longer than {timeout:g}s; is the tmux server stuck?"
            ) from None
        self.returncode = result.returncode
        self.raw_stdout = result.stdout
        self.stdout = result.stdout.rstrip("\n").split("\n") if result.stdout.strip() else []
        self.stderr = [line for line in result.stderr.split("\n") if line]


class TimedServer(libtmux.Server):
    """A libtmux server whose every command runs under ``timeout`` seconds (``Tmux`` sets
    it)."""

    timeout: float

    # libtmux's own cmd returns its tmux_cmd; TimedCmd offers the same four attributes (with
    # a timeout) without being one, which every caller in libtmux and here is content with.
    def cmd(  # type: ignore[override]  # see above: a TimedCmd, not libtmux's tmux_cmd
        self, cmd: str, *args: object, target: str | int | None = None
    ) -> TimedCmd:
        return self.cmd_with_input(None, cmd, *args, target=target)

    def cmd_with_input(
        self, stdin: str | None, cmd: str, *args: object, target: str | int | None = None
    ) -> TimedCmd:
        """``cmd`` with ``stdin`` as its standard input (``load-buffer -`` reads it)."""
        server_args: list[str] = []
        if self.config_file:
            server_args.append(f"-f{self.config_file}")
        if self.socket_path:
            server_args.append(f"-S{self.socket_path}")
        elif self.socket_name:
            server_args.append(f"-L{self.socket_name}")
        target_args = ["-t", str(target)] if target is not None else []
        return TimedCmd([*server_args, cmd, *target_args, *map(str, args)], self.timeout, stdin)
