"""CPU of the monitor with N live tmux agents (goal: < 5 % of one core for 50).

Starts N fake agents on a private tmux server, then runs the monitor loop in this
process for a while and divides the CPU it used (this process plus the tmux client
processes it ran) by the wall time. The tmux server's CPU over the same time is
printed too; it includes drawing the agents' own output.

    python benchmarks/monitor_cpu.py [--agents 50] [--seconds 30] [--interval 1.0]
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from _common import process_cpu
from tmux_fleet import fleet

from runeconsole.services.supervision.service import MonitorReport


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=None, help="monitor interval (s)")
    args = parser.parse_args()
    with fleet() as f:
        interval = args.interval or f.supervisor.settings.monitor_interval
        for n in range(args.agents):
            key = f"worker-w{n:02d}"
            f.supervisor.spawn(
                "worker", f"w{n:02d}", f.agent_command(key, "--tick", "3", "--heartbeat", "30")
            )
        time.sleep(3)  # let every agent draw its first screen
        f.supervisor.monitor_step()  # first pass writes hooks and last_seen; not the steady state
        passes: list[MonitorReport] = []
        stop = threading.Event()
        loop = threading.Thread(
            target=f.supervisor.run_monitor,
            kwargs={"interval": interval, "stop": stop, "on_report": passes.append},
            daemon=True,
        )
        server = int(f.tmux.server.cmd("display-message", "-p", "#{pid}").stdout[0])
        server_before = process_cpu(server)
        cpu_before, wall_before = cpu_seconds(), time.monotonic()
        loop.start()
        time.sleep(args.seconds)
        stop.set()
        loop.join(timeout=10)
        cpu, wall = cpu_seconds() - cpu_before, time.monotonic() - wall_before
        server_cpu = process_cpu(server) - server_before
        seen = [len(report.observations) for report in passes]
        running = sum(1 for obs in passes[-1].observations.values() if obs.state == "running")
        step = sorted(report.seconds for report in passes)
    print(
        f"{args.agents} agents, monitor interval {interval:g}s, {len(passes)} passes in {wall:.1f}s"
    )
    print(f"agents observed per pass: min {min(seen)} max {max(seen)}; running at end: {running}")
    print(
        f"pass duration: median {step[len(step) // 2] * 1000:.1f} ms, max {step[-1] * 1000:.1f} ms"
    )
    print(f"monitor CPU: {cpu:.2f}s over {wall:.1f}s = {100 * cpu / wall:.2f}% of one core")
    print(
        f"tmux server CPU meanwhile: {100 * server_cpu / wall:.2f}% of one core "
        "(answering the monitor and drawing every agent's output)"
    )


if __name__ == "__main__":
    main()
