"""tmux by its own command line, every command under a timeout.

Each command is one ``tmux`` process on the server a socket name or path (and a config
file) names, run through ``TimedCmd`` (``adapters/tmux_command.py``), so a stuck server
never hangs the console or the monitor. It uses tmux's own argument forms: the agent
command is passed as an argument list (tmux then executes it without a shell) and text
is sent with ``send-keys -l``, so nothing a caller passes is ever interpreted by a shell.
libtmux's server model on the same server, timed the same way, is ``Tmux.server``, made
on first use: nothing here needs it, and libtmux costs about 80 ms to import.

A private socket keeps tests and benchmarks off the operator's server. Sessions
are created with ``remain-on-exit`` so an exited agent leaves its pane (and exit
status) behind for the supervisor to read instead of vanishing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from runeconsole.adapters.tmux_command import TimedCmd, server_args
from runeconsole.core.errors import RuneError
from runeconsole.core.pids import zombie_exit

if TYPE_CHECKING:
    from runeconsole.adapters.tmux_server import TimedServer

DEFAULT_TIMEOUT = 5.0
PANE_WIDTH, PANE_HEIGHT = 160, 48
_FIELDS = (
    "session_name",
    "pane_id",
    "pane_pid",
    "pane_dead",
    "pane_dead_status",
    "pane_dead_signal",
)
_SEPARATOR = "\x1frunecapture"
_BUFFERS = itertools.count()
# What tmux says when no server runs on the socket (then there are no sessions at all);
# any other failure, such as permission denied, must not read as "every agent is gone".
# A server whose last session just ended exits, and a client caught mid-way sees it go
# (or finds it with no session left: "no current target").
NO_SERVER = (
    "no server running",
    "(No such file or directory)",
    "(Connection refused)",
    "server exited unexpectedly",
    "lost server",
    "no current target",
)


def literal(argument: str) -> str:
    """``argument`` as tmux's command parser gives it back: one ending in ';' would end the
    tmux command there (and what follows would run as tmux commands), so its ';' is
    escaped (tmux turns a trailing '\\;' into ';')."""
    return argument[:-1] + "\\;" if argument.endswith(";") else argument


@dataclass(frozen=True)
class PaneLook:
    """A pane by id: its first process, whether it has exited, and its screen now."""

    pane_id: str
    pid: int | None
    dead: bool
    screen: str


@dataclass(frozen=True)
class PaneInfo:
    """The one pane of an agent's session, as ``list-panes`` reports it."""

    session: str
    pane_id: str
    pid: int | None
    dead: bool
    exit_status: int | None
    exit_signal: int | None = None


class Tmux:
    """The operations the supervisor needs, on one tmux server."""

    def __init__(
        self,
        socket_name: str | None = None,
        *,
        socket_path: str | None = None,
        config_file: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.socket_path = socket_path
        # libtmux's own rule: a socket's path, when given, is the one used
        self.socket_name = socket_name if socket_path is None else None
        self.config_file = config_file
        self.timeout = timeout

    @cached_property
    def server(self) -> TimedServer:
        """libtmux's server model on the same server, commands timed the same way, for a
        caller that wants its objects: made (and libtmux imported, about 80 ms) on first
        use. ``Tmux``'s own commands never need it."""
        from runeconsole.adapters.tmux_server import TimedServer

        server = TimedServer(
            socket_name=self.socket_name, socket_path=self.socket_path, config_file=self.config_file
        )
        server.timeout = self.timeout
        return server

    def _run(self, *args: object, target: str | None = None) -> TimedCmd:
        return self._command(None, *args, target=target)

    def _command(self, stdin: str | None, *args: object, target: str | None = None) -> TimedCmd:
        """tmux ``args`` on this server (``stdin`` as its standard input), timed."""
        where = server_args(self.socket_name, self.socket_path, self.config_file)
        target_args = ["-t", target] if target is not None else []
        command = [*where, str(args[0]), *target_args, *map(str, args[1:])]
        return TimedCmd(command, self.timeout, stdin)

    def _check(self, result: TimedCmd, what: str) -> TimedCmd:
        if result.returncode != 0:
            detail = result.stderr[-1] if result.stderr else "no output"
            raise RuneError(f"tmux {what} failed: {detail}")
        return result

    def new_session(
        self,
        name: str,
        command: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str] | None = None,
    ) -> PaneInfo:
        """Start ``command`` (an argument list, run without a shell) in a detached session."""
        if not command:
            raise RuneError("no command to run in the tmux session")
        env_args: list[str] = []
        for key, value in (env or {}).items():
            env_args += ["-e", literal(f"{key}={value}")]
        result = self._run(
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            PANE_WIDTH,
            "-y",
            PANE_HEIGHT,
            "-c",
            literal(str(cwd)),
            *env_args,
            "-P",
            "-F",
            "#{pane_id}\t#{pane_pid}",
            "--",
            *map(literal, command),
            ";",
            "set-option",
            "-t",
            f"={name}:",
            "remain-on-exit",
            "on",
        )
        self._check(result, f"new-session {name}")
        pane_id, _, pid = (result.stdout[0] if result.stdout else "").partition("\t")
        return PaneInfo(name, pane_id, int(pid) if pid.isdigit() else None, False, None)

    def panes(self) -> dict[str, PaneInfo]:
        """Every session's first pane in one ``list-panes -a`` call ({} when no server runs)."""
        fmt = "\t".join(f"#{{{field}}}" for field in _FIELDS)
        result = self._run("list-panes", "-a", "-F", fmt)
        if result.returncode != 0:
            detail = " ".join(result.stderr)
            if any(sign in detail for sign in NO_SERVER):
                return {}
            raise RuneError(f"tmux list-panes failed: {detail or 'no output'}")
        panes: dict[str, PaneInfo] = {}
        for line in result.stdout:
            parts = line.split("\t")
            if len(parts) != len(_FIELDS) or parts[0] in panes:
                continue
            session, pane_id, pid, dead, status, killed_by = parts
            pane_pid = int(pid) if pid.isdigit() else None
            code = int(status) if status.isdigit() else None
            signal = int(killed_by) if killed_by.isdigit() else None
            if dead == "1" and code is None and signal is None:
                code, signal = zombie_exit(pane_pid)
            panes[session] = PaneInfo(session, pane_id, pane_pid, dead == "1", code, signal)
        return panes

    def pane(self, session: str) -> PaneInfo | None:
        return self.panes().get(session)

    def has_session(self, session: str) -> bool:
        # tmux reads '.' and ':' in a target as window and pane: no session has them
        if not session or "." in session or ":" in session:
            return False
        return self._run("has-session", target=f"={session}").returncode == 0

    def capture(self, target: str, lines: int = 0) -> str:
        """Visible screen of a pane (plus ``lines`` of history), wrapped lines joined."""
        history = ["-S", f"-{lines}"] if lines else []
        result = self._run("capture-pane", "-p", "-J", *history, target=target)
        self._check(result, f"capture-pane {target}")
        return result.raw_stdout.rstrip("\n")

    def capture_many(self, pane_ids: Iterable[str]) -> dict[str, str]:
        """Screens of many panes with one tmux process (panes that vanished are left out).

        tmux stops a command sequence at the first failure, so after a pane that
        vanished the rest are asked for again in a new sequence.
        """
        pending = list(pane_ids)
        screens: dict[str, str] = {}
        while pending:
            args: list[str] = []
            for pane_id in pending:
                args += ["capture-pane", "-p", "-J", "-t", pane_id, ";"]
                # The id comes back through a format: display-message runs its text
                # through strftime, which would mangle a literal "%8".
                args += ["display-message", "-p", "-t", pane_id, _SEPARATOR + "#{pane_id}", ";"]
            result = self._run(*args[:-1])
            lines: list[str] = []
            for line in result.raw_stdout.split("\n"):
                if line.startswith(_SEPARATOR):
                    screens[line[len(_SEPARATOR) :]] = "\n".join(lines).rstrip("\n")
                    lines = []
                else:
                    lines.append(line)
            if result.returncode == 0:
                break
            done = sum(1 for pane_id in pending if pane_id in screens)
            pending = pending[done + 1 :]
        return screens

    def look(self, target: str, lines: int = 0) -> PaneLook | None:
        """The pane ``target`` names (a pane id such as ``%3``, or ``=session:``) and its
        screen (plus ``lines`` of history), in one tmux process; ``None`` when there is no
        such pane (or no server)."""
        history = ["-S", f"-{lines}"] if lines else []
        result = self._run(
            "display-message", "-p", "-t", target, "#{pane_id}\t#{pane_pid}\t#{pane_dead}", ";",
            "capture-pane", "-p", "-J", "-t", target, *history,
        )  # fmt: skip
        if result.returncode != 0:
            detail = " ".join(result.stderr)
            if "can't find" in detail or any(sign in detail for sign in NO_SERVER):
                return None
            raise RuneError(f"tmux display-message {target} failed: {detail or 'no output'}")
        head, _, screen = result.raw_stdout.partition("\n")
        pane_id, _, rest = head.partition("\t")
        pid, _, dead = rest.partition("\t")
        return PaneLook(
            pane_id, int(pid) if pid.isdigit() else None, dead == "1", screen.rstrip("\n")
        )

    def paste(self, target: str, text: str, *, enter: bool = True) -> None:
        """``text`` into the pane as one bracketed paste (the program sees a paste, not
        keys: a newline in it does not submit), then Enter; one tmux process. The text
        goes through stdin into a buffer of its own, deleted by the paste. A pane in copy
        mode (someone scrolling it) leaves it first, or Enter would go to the mode."""
        buffer = f"runeconsole-{os.getpid()}-{next(_BUFFERS)}"
        args: list[object] = ["load-buffer", "-b", buffer, "-", ";"]
        args += ["copy-mode", "-q", "-t", target, ";"]
        args += ["paste-buffer", "-p", "-d", "-b", buffer, "-t", target]
        if enter:
            args += [";", "send-keys", "-t", target, "Enter"]
        result = self._command(text, *args)
        self._check(result, f"paste into {target}")

    def send_text(self, target: str, text: str, *, enter: bool = True) -> None:
        """Type ``text`` literally (no key names, no shell), then Enter."""
        self._check(self._run("send-keys", "-l", "--", literal(text), target=target), "send-keys")
        if enter:
            self._check(self._run("send-keys", "Enter", target=target), "send-keys")

    def press(self, target: str, key: str) -> None:
        """Press one named key (``Escape``, ``Enter``) in the pane."""
        self._check(self._run("send-keys", key, target=target), "send-keys")

    def kill_session(self, session: str) -> bool:
        """Kill the session; False when there was none."""
        result = self._run("kill-session", target=f"={session}")
        return result.returncode == 0

    def kill_server(self) -> None:
        """Stop the server and every session on it; no server is not an error. A private
        server's socket file goes too (tmux leaves it behind when its server is killed)."""
        self._run("kill-server")
        if self.socket_name:
            socket_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
            with contextlib.suppress(OSError):
                (socket_dir / self.socket_name).unlink(missing_ok=True)

    def new_window(
        self, name: str, command: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None
    ) -> None:
        """``command`` (an argument list, run without a shell) in a new window of the
        current session (the client's, as ``$TMUX`` says), with ``env`` set."""
        env_args = [literal(f"-e{key}={value}") for key, value in (env or {}).items()]
        result = self._run(
            "new-window",
            "-n",
            name,
            "-c",
            literal(str(cwd)),
            *env_args,
            "--",
            *map(literal, command),
        )
        self._check(result, f"new-window {name}")

    def switch_client(self, session: str) -> None:
        """Move the operator's tmux client (the one running us) to ``session``."""
        if not os.environ.get("TMUX"):
            raise RuneError(
                f"not inside tmux; attach with: {' '.join(self.attach_command(session))}"
            )
        result = self._run("switch-client", target=f"={session}")
        if result.returncode != 0:
            detail = result.stderr[-1] if result.stderr else "no client"
            raise RuneError(
                f"cannot switch to {session} ({detail}); attach with: "
                f"{' '.join(self.attach_command(session))}"
            )

    def attach_command(self, session: str) -> list[str]:
        command = ["tmux"]
        if self.socket_path:
            command += ["-S", str(self.socket_path)]
        elif self.socket_name:
            command += ["-L", self.socket_name]
        return [*command, "attach-session", "-t", f"={session}"]


def open_window(
    name: str, command: Sequence[str], cwd: Path, env: dict[str, str] | None = None
) -> None:
    """A new window of the operator's tmux (the server this process runs in, from
    ``$TMUX``) running ``command``; the error says how to run it by hand when this
    process is not inside tmux."""
    socket = os.environ.get("TMUX", "").split(",")[0]
    if not socket:
        raise RuneError(f"not inside tmux; run it in a terminal: {shlex.join(command)}")
    Tmux(socket_path=socket).new_window(name, command, cwd=cwd, env=env)
