"""libtmux's server model with every command under a timeout, for whoever wants libtmux's
objects on a ``Tmux``'s server (``Tmux.server``): ``Tmux`` itself runs its commands
through ``adapters/tmux_command.py`` and never imports libtmux (about 80 ms)."""

from __future__ import annotations

import libtmux

from runeconsole.adapters.tmux_command import TimedCmd, server_args


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
        path = None if self.socket_path is None else str(self.socket_path)
        where = server_args(self.socket_name, path, self.config_file)
        target_args = ["-t", str(target)] if target is not None else []
        return TimedCmd([*where, cmd, *target_args, *map(str, args)], self.timeout, stdin)
