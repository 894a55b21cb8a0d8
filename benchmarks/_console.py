"""The console in a real tmux pane on a private server, watched as the operator sees it.

``ConsolePane`` starts ``runeconsole --root FLEET`` in a pane of a private tmux server
(``tmux -L rc-bench-...``, never the operator's) and attaches one control-mode client
(``tmux -C``) to it. Through that one long-lived client the benchmarks

- read the screen (``capture-pane``) without forking a tmux process per look: a poll
  costs the tmux server a fraction of a millisecond and the console nothing (tmux
  answers from its own copy of the screen);
- send keys (``send-keys``), as a terminal would;
- receive every byte the console writes to its terminal, as ``%output`` notifications,
  stamped on arrival: "row repainted" is the moment the new text reaches the terminal,
  not a guess from inside the app.

Every wait has a deadline, and ``close`` (also on any error, and on Ctrl-C) kills the
tmux server, the console and any profiler attached to it, and removes the socket file.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import make_fleet, scratch

REPO = Path(__file__).resolve().parents[1]
OutputHook = Callable[[float, bytes], None]


class PaneError(RuntimeError):
    pass


def unescape(data: bytes) -> bytes:
    r"""``%output`` data: bytes below 32 and the backslash are sent as ``\ooo``."""
    if b"\\" not in data:
        return data
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 0x5C and i + 3 < len(data) + 1 and data[i + 1 : i + 4].isdigit():
            out.append(int(data[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


class ControlClient:
    """One tmux control-mode client (``tmux -C attach``): commands answered through it, and
    every byte the attached pane's program writes handed to the ``on_output`` hooks,
    stamped on arrival."""

    def __init__(self, argv: Sequence[str]) -> None:
        self._replies: queue.Queue[tuple[bool, list[str]]] = queue.Queue()
        self._write_lock = threading.Lock()
        self._output_hooks: list[OutputHook] = []
        self.output_bytes = 0
        self._client = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._reader = threading.Thread(target=self._read, daemon=True, name="tmux-control")
        self._reader.start()
        self.command("display-message", "-p", "ready")  # attached and answering

    def _read(self) -> None:
        assert self._client.stdout is not None
        block: list[str] | None = None
        for raw in self._client.stdout:
            line = raw.rstrip(b"\n")
            if block is not None:
                if line.startswith((b"%end ", b"%error ")):
                    # Flags 1: a reply to one of our commands (0: the attach itself).
                    if line.endswith(b" 1"):
                        self._replies.put((line.startswith(b"%end "), block))
                    block = None
                else:
                    block.append(line.decode("utf-8", "replace"))
            elif line.startswith(b"%output "):
                now = time.monotonic()
                _, _, data = line[len(b"%output ") :].partition(b" ")
                data = unescape(data)
                self.output_bytes += len(data)
                for hook in list(self._output_hooks):
                    hook(now, data)
            elif line.startswith(b"%begin "):
                block = []
        self._replies.put((False, ["control client ended"]))

    def command(self, *args: str, timeout: float = 15.0) -> list[str]:
        """Run a tmux command through the control client; its output lines."""
        if self._client.stdin is None or self._client.stdin.closed:
            raise PaneError("not attached")
        line = " ".join(_quote(arg) for arg in args) + "\n"
        with self._write_lock:
            self._client.stdin.write(line.encode())
            self._client.stdin.flush()
            try:
                ok, lines = self._replies.get(timeout=timeout)
            except queue.Empty:
                raise PaneError(f"tmux did not answer {args[0]} within {timeout:g}s") from None
        if not ok:
            raise PaneError(f"tmux {args[0]}: {' '.join(lines)}")
        return lines

    def on_output(self, hook: OutputHook) -> None:
        """Call ``hook(arrival, bytes)`` (on the reader thread) for every write."""
        self._output_hooks.append(hook)

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self._client.stdin is not None
            self._client.stdin.close()

    def wait(self) -> None:
        try:
            self._client.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._client.kill()


class ConsolePane:
    """``with ConsolePane(root) as pane: pane.start_console(); pane.wait_for(...)``."""

    def __init__(
        self,
        root: Path,
        *,
        monitor: bool = True,
        size: tuple[int, int] = (160, 45),
        console_args: Sequence[str] = (),
        repo: Path = REPO,
    ) -> None:
        if shutil.which("tmux") is None:
            raise SystemExit("tmux is not installed")
        self.root = root
        self.monitor = monitor
        self.size = size
        self.console_args = list(console_args)
        self.repo = repo  # the checkout whose code runs (another one's, to compare)
        self.socket = f"rc-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.pid: int | None = None
        self.started_at = 0.0
        self._control: ControlClient | None = None
        self._profilers: list[subprocess.Popen[bytes]] = []

    @property
    def output_bytes(self) -> int:
        """Bytes the console has written to its terminal so far."""
        return self._control.output_bytes if self._control else 0

    # -- tmux ------------------------------------------------------------------------------

    def tmux_argv(self, *args: str) -> list[str]:
        return ["tmux", "-L", self.socket, "-f", "/dev/null", *args]

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(
            self.tmux_argv(*args), capture_output=True, text=True, timeout=15, check=False
        )
        if result.returncode:
            raise PaneError(f"tmux {' '.join(args[:2])}: {result.stderr.strip()}")
        return result.stdout

    def __enter__(self) -> ConsolePane:
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _open(self) -> None:
        width, height = self.size
        # A placeholder holds the pane until start_console, so the control client is
        # attached (and sees every byte) before the console writes its first.
        self._tmux(
            "new-session", "-d", "-x", str(width), "-y", str(height), "-s", "console",
            "sleep", "3600",
        )  # fmt: skip
        self._tmux("set-option", "-g", "window-size", "manual")
        self._tmux("set-option", "-g", "remain-on-exit", "on")  # a crash leaves its screen
        self._control = ControlClient(self.tmux_argv("-C", "attach-session", "-t", "console"))

    def start_console(self) -> float:
        """Start the console in the pane; returns the moment (``time.monotonic``) it was."""
        command = [sys.executable, "-m", "runeconsole", "--root", str(self.root)]
        if not self.monitor:
            command.append("--no-monitor")
        command += self.console_args
        # The monitor looks for the agents' sessions on this private server.
        env = {
            "PYTHONPATH": str(self.repo),
            "TERM": "xterm-256color",
            "RUNECONSOLE_TMUX_SOCKET": self.socket,
        }
        self.started_at = time.monotonic()
        flags = [f"-e{name}={value}" for name, value in env.items()]
        # In the root: ``-m runeconsole`` looks in the working directory first, which must
        # not be a checkout other than ``repo``.
        self.command("respawn-pane", "-k", "-t", "console", "-c", str(self.root), *flags, *command)
        pid = int(self.command("display-message", "-p", "-t", "console", "#{pane_pid}")[0])
        self.pid = pid
        return self.started_at

    def server_pid(self) -> int:
        """The private tmux server's pid (its CPU is what forwarding the console costs)."""
        return int(self.command("display-message", "-p", "#{pid}")[0])

    def console_alive(self) -> bool:
        dead = self.command("display-message", "-p", "-t", "console", "#{pane_dead}")
        return dead[:1] == ["0"]

    # -- the control client ----------------------------------------------------------------

    def command(self, *args: str, timeout: float = 15.0) -> list[str]:
        """Run a tmux command through the control client; its output lines."""
        if self._control is None:
            raise PaneError("not attached")
        return self._control.command(*args, timeout=timeout)

    def on_output(self, hook: OutputHook) -> None:
        """Call ``hook(arrival, bytes)`` (on the reader thread) for every console write."""
        if self._control is not None:
            self._control.on_output(hook)

    def capture(self, *, styles: bool = False) -> list[str]:
        args = ["capture-pane", "-p", "-t", "console"]
        if styles:
            args.append("-e")
        return self.command(*args)

    def send_keys(self, *keys: str) -> float:
        """Send keys; returns the moment they were handed to tmux."""
        sent = time.monotonic()
        self.command("send-keys", "-t", "console", *keys)
        return sent

    def wait_for(
        self,
        predicate: Callable[[list[str]], bool],
        *,
        timeout: float,
        styles: bool = False,
        poll: float = 0.001,
        what: str = "the screen",
    ) -> float:
        """Poll the screen until ``predicate(lines)``; the moment the satisfying capture
        came back (an upper bound on when it was drawn, within one poll)."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.capture(styles=styles)
            seen = time.monotonic()
            if predicate(lines):
                return seen
            if seen > deadline:
                alive = "running" if self.console_alive() else "exited"
                screen = "\n".join(self.capture())
                raise PaneError(
                    f"{what} not reached within {timeout:g}s (console {alive}):\n{screen}"
                )
            time.sleep(poll)

    # -- profiling -------------------------------------------------------------------------

    @staticmethod
    def py_spy_argv(output: Path, *, rate: int = 100) -> list[str]:
        """``py-spy record`` into ``output``: collapsed stacks, one root frame per thread.

        ``--nonblocking``: the console is not paused for each sample, which also lets
        py-spy tell waiting threads from running ones (paused, every thread looks
        running and idle waits fill the profile)."""
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        if not Path(spy).exists():
            raise SystemExit("py-spy is not installed: python -m pip install py-spy")
        options = ["--rate", str(rate), "--format", "raw", "--threads", "--nonblocking"]
        return [spy, "record", *options, "--output", str(output)]

    def py_spy(self, output: Path, seconds: float, *, rate: int = 100) -> subprocess.Popen[bytes]:
        """Attach ``py-spy record`` to the running console for ``seconds``."""
        argv = self.py_spy_argv(output, rate=rate)
        argv += ["--pid", str(self.pid), "--duration", str(round(seconds))]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._profilers.append(process)
        return process

    def stop_profilers(self) -> None:
        """End every py-spy now (on SIGINT it writes what it has)."""
        for process in self._profilers:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        self._profilers.clear()

    # -- cleaning up -----------------------------------------------------------------------

    def close(self) -> None:
        self.stop_profilers()
        if self._control is not None:
            self._control.close()
        pid = self.pid
        subprocess.run(self.tmux_argv("kill-server"), capture_output=True, timeout=15, check=False)
        if pid is not None:
            _end(pid)
        if self._control is not None:
            self._control.wait()
        with contextlib.suppress(OSError):
            Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink()


def _end(pid: int, grace: float = 5.0) -> None:
    """The console got SIGHUP with the server; make sure it is gone."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _quote(arg: str) -> str:
    """One argument of a tmux command line (tmux's own quoting: single quotes)."""
    if arg and all(c.isalnum() or c in "-_./:=,+@" for c in arg):
        return arg
    return "'" + arg.replace("'", "'\\''") + "'"


# -- what the screen shows --------------------------------------------------------------

STATUS_COUNTS = re.compile(r"● (\d+)")


def status_counts(lines: list[str]) -> list[int]:
    """The status bar's green, yellow, red and grey counts (empty before it is drawn)."""
    return [int(n) for n in STATUS_COUNTS.findall(lines[0])] if lines else []


def first_complete_paint(agents: int, first_row: str = "w00000") -> Callable[[list[str]], bool]:
    """The status bar counts every agent, the first row and the footer are drawn."""

    def painted(lines: list[str]) -> bool:
        return (
            sum(status_counts(lines)) == agents
            and any(first_row in line for line in lines[1:])
            and "Quit" in lines[-1]
        )

    return painted


@dataclass
class Started:
    pane: ConsolePane
    root: Path
    first_paint: float  # seconds from start to the first complete paint


@contextlib.contextmanager
def console_on_fleet(
    agents: int,
    *,
    monitor: bool,
    kind: str = "unsupervised",
    heartbeat_spread: float = 0.0,
    before_paint: Callable[[ConsolePane], object] | None = None,
    everything: bool = True,
) -> Iterator[Started]:
    """A fresh fleet in a temp dir, the console on it in a pane, past its first complete
    paint; everything removed on the way out. ``before_paint`` runs as soon as the
    console's process exists (to attach a profiler); ``everything``: budgets, costs and
    worktrees too (``make_fleet``), every column and watcher at work."""
    with scratch("bench") as base:
        root = base / "fleet"
        make_fleet(
            root, agents, kind=kind, heartbeat_spread=heartbeat_spread, everything=everything
        )
        with ConsolePane(root, monitor=monitor) as pane:
            started = pane.start_console()
            if before_paint is not None:
                before_paint(pane)
            painted = pane.wait_for(
                first_complete_paint(agents), timeout=60 + agents / 200, what="first paint"
            )
            yield Started(pane, root, painted - started)
