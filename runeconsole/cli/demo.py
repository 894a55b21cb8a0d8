"""``runeconsole demo``: a throw-away project, a simulated fleet, and the console on it."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.errors import InvalidInput
from runeconsole.services.supervision.settings import SOCKET_ENV

if TYPE_CHECKING:
    from runeconsole.tui.console.app import RuneConsole


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    sub = subparsers.add_parser(
        "demo", help="open the console on a live demo fleet in a throw-away project"
    )
    sub.add_argument("--keep", action="store_true", help="keep the demo project on exit")
    sub.add_argument("--dir", type=Path, help="make the demo project here (must not exist)")
    sub.add_argument("--fleet-only", action="store_true", help="run the fleet without the console")
    sub.add_argument(
        "--duration", type=float, help="stop the fleet after this many seconds (--fleet-only)"
    )
    sub.set_defaults(func=run)


def start_fleet(
    root: Path, duration: float | None = None, monitor: bool = False
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "runeconsole.demo.fleet", "--root", str(root)]
    command += ["--parent", str(os.getpid())]  # the fleet ends when we do, however we end
    if duration:
        command += ["--duration", str(duration)]
    if monitor:
        command.append("--monitor")
    log = open(root / "tmp" / "demo-fleet.log", "ab")  # noqa: SIM115 - handed to the child
    with log:
        return subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )


def stop_fleet(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


EXIT_GRACE_SECONDS = 3.0  # after a signal, the console has this long to close its screen


class Teardown:
    """Everything the demo started, stopped once, whichever way the demo ends.

    A closed terminal (SIGHUP) or a kill (SIGTERM) stops the agents at once, in the signal
    handler, before the console tries to restore a screen that may be gone (writing to a
    closed terminal can block Textual's shutdown for ever). The project is removed once
    the console has closed, so nothing of it writes the project back; if the console has
    not closed within ``EXIT_GRACE_SECONDS``, it is removed and the process ends anyway.
    """

    def __init__(self, root: Path, socket: str, *, keep: bool, remove: Path, tmux: bool) -> None:
        self.root = root
        self.socket = socket
        self.keep = keep
        self.remove = remove
        self.tmux = tmux
        self.fleet: subprocess.Popen[bytes] | None = None
        self.console: RuneConsole | None = None
        self._agents_stopped = False
        self._project_gone = False
        # The main thread's teardown and the grace timer's may overlap: the second waits
        # for the first, so the process never ends between "removing" and removed.
        self._removing = threading.Lock()

    def stop_agents(self) -> None:
        if self._agents_stopped:
            return
        self._agents_stopped = True
        if self.fleet is not None:
            stop_fleet(self.fleet)
        # The fleet stops its agents; a fleet that had to be killed cannot, so end the server.
        if self.tmux:
            Tmux(self.socket).kill_server()

    def __call__(self) -> None:
        self.stop_agents()
        with self._removing:
            if self._project_gone:
                return
            if self.console is not None:  # its monitor writes the project's state till it ends
                self.console.stop_monitor(timeout=EXIT_GRACE_SECONDS)
            if self.keep:
                with contextlib.suppress(OSError):  # the terminal may be gone
                    print(f"demo project kept in {self.root}")
            else:
                shutil.rmtree(self.remove, ignore_errors=True)
            self._project_gone = True

    def on_signal(self, number: int, _frame: object) -> None:
        # The grace period runs from the signal, not from the fleet's end: a fleet slow to
        # stop (up to 10 s under load) must not hold the demo's exit back by as much.
        timer = threading.Timer(EXIT_GRACE_SECONDS, self._end, args=(128 + number,))
        timer.daemon = True
        timer.start()
        self.stop_agents()
        raise SystemExit(0)

    def _end(self, code: int) -> None:
        self()
        os._exit(code)


def run(args: argparse.Namespace) -> int:
    if args.dir is not None:
        if args.dir.exists():
            raise InvalidInput(f"--dir {args.dir} exists; name a new directory")
        root = args.dir.resolve()
    else:
        root = Path(tempfile.mkdtemp(prefix="runeconsole-demo-")) / "project"
    # the demo's project, scripts and scenes (about 120 ms) when the demo runs, not for --help
    from runeconsole.demo.project import demo_socket, make_project

    socket = demo_socket()
    has_tmux = shutil.which("tmux") is not None
    keep = args.keep or args.dir is not None
    teardown = Teardown(
        root, socket, keep=keep, remove=root.parent if args.dir is None else root, tmux=has_tmux
    )
    # A closed terminal (SIGHUP) or a kill (SIGTERM) still cleans up, as `q` does.
    for number in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(number, teardown.on_signal)
    try:
        make_project(root, socket)
        # The fleet and the console inherit this: the demo's agents live on the demo's own
        # server even when the caller points runeconsole at another one.
        os.environ[SOCKET_ENV] = socket
        (root / "tmp").mkdir(exist_ok=True)
        if not has_tmux:
            print(
                "runeconsole: tmux is not installed: the demo's agents are simulated without "
                "tmux sessions (install tmux to see them live)",
                file=sys.stderr,
            )
        teardown.fleet = start_fleet(
            root, args.duration if args.fleet_only else None, args.fleet_only
        )
        if args.fleet_only:
            print(f"demo fleet running in {root} (pid {teardown.fleet.pid}); ctrl+c stops it")
            while teardown.fleet.poll() is None:
                time.sleep(0.2)
        else:
            from runeconsole.tui.console.app import create_app

            teardown.console = create_app(root, monitor=True)
            teardown.console.run()
    finally:
        teardown()
    return 0
