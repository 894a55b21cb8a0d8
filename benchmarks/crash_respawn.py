"""tmux session killed -> agent marked crashed (goal <= 2 s) -> successor running (<= 5 s).

A monitor loop runs as in ``runeconsole monitor`` (auto-respawn on); each trial kills a
fake agent's session at a random moment of the monitor's cycle and times when the
``AGENT_CRASHED`` signal appears, when the successor's process runs, and when the
successor has drawn its first screen.

    python benchmarks/crash_respawn.py [--trials 10] [--interval 1.0]
"""

from __future__ import annotations

import argparse
import os
import random
import threading
import time
from pathlib import Path

from tmux_fleet import fleet, percentiles

from runeconsole.adapters.tmux import process_alive


def crash_signals(root: Path) -> int:
    """AGENT_CRASHED signals so far: the alert the operator (and the console) sees."""
    signals = root / ".claude" / "attractor" / "signals"
    return sum(1 for entry in os.scandir(signals) if entry.name.endswith("-AGENT_CRASHED.json"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--interval", type=float, default=None, help="monitor interval (s)")
    args = parser.parse_args()
    detect, running, drawn = [], [], []
    with fleet(auto_respawn=True, respawn_limit=args.trials + 1) as f:
        interval = args.interval or f.supervisor.settings.monitor_interval
        key = "worker-bench"
        f.supervisor.spawn("worker", "bench", f.agent_command(key, "--tick", "0.5"))

        stop = threading.Event()
        loop = threading.Thread(
            target=f.supervisor.run_monitor,
            kwargs={"interval": interval, "stop": stop},
            daemon=True,
        )
        loop.start()
        rng = random.Random(5)
        for _ in range(args.trials):
            time.sleep(1.2 + rng.uniform(0, interval))
            old_pid = f.supervisor.registry.get(key).get("pid")
            alerts = crash_signals(f.root)
            killed = time.monotonic()
            f.tmux.kill_session(f"rune-{key}")
            while crash_signals(f.root) == alerts:
                time.sleep(0.005)
            detect.append(time.monotonic() - killed)
            while True:
                record = f.supervisor.registry.get(key)
                pid = record.get("pid")
                if record.status == "active" and pid != old_pid and process_alive(pid):
                    break
                time.sleep(0.005)
            running.append(time.monotonic() - killed)
            while "Resuming." not in f.tmux.capture(f"=rune-{key}:"):
                time.sleep(0.01)
            drawn.append(time.monotonic() - killed)
        stop.set()
        loop.join(timeout=10)
    print(f"monitor interval {interval:g}s, {args.trials} kills")
    print(f"killed -> marked crashed:          {percentiles(detect)}")
    print(f"killed -> successor running:        {percentiles(running)}")
    print(f"killed -> successor's first screen: {percentiles(drawn)}")


if __name__ == "__main__":
    main()
