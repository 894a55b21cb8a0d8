"""One tmux command, on the server a socket and a config file name, under a timeout.

``Tmux`` runs every command through ``TimedCmd`` (and ``TimedServer``, libtmux's server
model, does the same), so tmux's command line is built in one place and no command can
hang the console or the monitor.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from runeconsole.core.errors import RuneError


def server_args(
    socket_name: str | None, socket_path: str | None, config_file: str | None
) -> list[str]:
    """tmux's own arguments naming the server (a socket's path before its name, as
    libtmux has it) and its config file."""
    args = [f"-f{config_file}"] if config_file else []
    if socket_path:
        args.append(f"-S{socket_path}")
    elif socket_name:
        args.append(f"-L{socket_name}")
    return args


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
