"""Cold start to first complete paint with 1,000 agents, in a real tmux pane.

Starts ``runeconsole --root FLEET`` in a tmux session on a private socket and polls
the pane until the status bar counts all agents and the first rows are drawn.
Usage: python benchmarks/cold_start.py [AGENTS] [RUNS]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import make_fleet

REPO = Path(__file__).resolve().parents[1]


def tmux(socket: str, *args: str) -> str:
    result = subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", *args],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    return result.stdout


def one_run(root: Path, agents: int, socket: str, monitor: bool) -> float:
    command = [sys.executable, "-m", "runeconsole", "--root", str(root)]
    if not monitor:
        command.append("--no-monitor")
    # The console's monitor looks for the agents' sessions on this (empty) private server.
    env = [f"-ePYTHONPATH={REPO}", "-eTERM=xterm-256color", f"-eRUNECONSOLE_TMUX_SOCKET={socket}"]
    start = time.perf_counter()
    tmux(socket, "new-session", "-d", "-x", "120", "-y", "40", "-s", "cold", *env, *command)
    try:
        while True:
            screen = tmux(socket, "capture-pane", "-p", "-t", "cold")
            if f"● {agents}" in screen and "w00000" in screen and "Quit" in screen:
                return time.perf_counter() - start
            if time.perf_counter() - start > 30:
                raise RuntimeError(f"console did not paint within 30 s:\n{screen}")
            time.sleep(0.005)
    finally:
        tmux(socket, "kill-server")


def main() -> int:
    agents = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    for monitor in (True, False):
        seconds = []
        for run in range(runs):
            # A fresh fleet and server each run: the monitor of one run marks the agents
            # (whose sessions do not exist) crashed, which the next must not inherit.
            with tempfile.TemporaryDirectory() as scratch:
                root = Path(scratch) / "fleet"
                make_fleet(root, agents)
                socket = f"rc-bench-{os.getpid()}-{run}-{int(monitor)}"
                seconds.append(one_run(root, agents, socket, monitor))
        seconds.sort()
        label = "with the monitor" if monitor else "--no-monitor"
        print(
            f"cold start -> first complete paint ({agents} agents, tmux 120x40, {label}): "
            f"best {seconds[0]:.2f} s, median {seconds[len(seconds) // 2]:.2f} s, "
            f"worst {seconds[-1]:.2f} s (goal <= 1.0 s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
