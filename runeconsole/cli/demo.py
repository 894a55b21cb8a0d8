"""``runeconsole demo``: a throw-away project, a simulated fleet, and the console on it."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.errors import InvalidInput
from runeconsole.demo.project import demo_socket, make_project
from runeconsole.services.supervision.settings import SOCKET_ENV


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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


def _leave(*_: object) -> None:
    raise SystemExit(0)


def run(args: argparse.Namespace) -> int:
    if args.dir is not None:
        if args.dir.exists():
            raise InvalidInput(f"--dir {args.dir} exists; name a new directory")
        root = args.dir.resolve()
    else:
        root = Path(tempfile.mkdtemp(prefix="runeconsole-demo-")) / "project"
    # A closed terminal (SIGHUP) or a kill (SIGTERM) still cleans up, as `q` does.
    for number in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(number, _leave)
    socket = demo_socket()
    make_project(root, socket)
    # The fleet and the console inherit this: the demo's agents live on the demo's own
    # server even when the caller points runeconsole at another one.
    os.environ[SOCKET_ENV] = socket
    (root / "tmp").mkdir(exist_ok=True)
    keep = args.keep or args.dir is not None
    has_tmux = shutil.which("tmux") is not None
    if not has_tmux:
        print(
            "runeconsole: tmux is not installed: the demo's agents are simulated without "
            "tmux sessions (install tmux to see them live)",
            file=sys.stderr,
        )
    fleet = start_fleet(root, args.duration if args.fleet_only else None, args.fleet_only)
    try:
        if args.fleet_only:
            print(f"demo fleet running in {root} (pid {fleet.pid}); ctrl+c stops it")
            while fleet.poll() is None:
                time.sleep(0.2)
        else:
            from runeconsole.tui.app import create_app

            create_app(root, monitor=True).run()
    finally:
        stop_fleet(fleet)
        # The fleet stops its agents; a fleet that had to be killed cannot, so end the server.
        if has_tmux:
            Tmux(socket).kill_server()
        if keep:
            print(f"demo project kept in {root}")
        else:
            shutil.rmtree(root.parent if args.dir is None else root, ignore_errors=True)
    return 0
