"""A heartbeating fleet: console CPU, and file written -> its row repainted, end to end.

A separate process (this script with ``--writer``) heartbeats every agent once per
``--interval`` (60 s: about 170 writes a second at 10,000 agents), evenly spread, the
way agents' heartbeats interleave; the fleet's last heartbeats are staggered the same
way, so every agent stays green and no liveness colour changes during the run. Each
write replaces the whole identity file (temp file, then rename), as the harness does;
``--durable`` fsyncs the file and its directory too, as ``runeconsole agent heartbeat``
does (the writers then cannot keep up with the largest fleets, so the default leaves it
out: the console sees the same file events either way). One writer process per
``--per-writer`` agents (12,500: four at 50,000); the rate they reached is printed.

How "row repainted" is observed. A few times a second (``--probes``) the writer's
heartbeat of an agent whose row is on screen also sets its ``node_id`` to a fresh
token (``p000042``) and reports the moment the rename was done. The console runs in a
real 160x45 tmux pane; a control-mode client receives every byte the console writes to
its terminal (``%output``), stamped on arrival, and the latency is from the writer's
rename to the first arrival of the token in that stream: the moment the new row
reaches the terminal, which is what the operator sees, with no polling at all. So the
probe costs the console exactly what any heartbeat of a visible row costs, and the
watcher costs only the tmux server's forwarding (its CPU is printed). The alternative,
an in-process ``App.run_test`` with a hook on the table's render, would leave out the
terminal write and the compositor's diffing, and share the console's event loop with
the measurement; ``agents_row_update.py`` is that kind, for a single write.

A token never seen within ``--grace`` seconds of the end counts as lost (printed).
Console CPU is CPU seconds over wall seconds across the whole window (its threads and
the tmux clients its monitor runs). The fleet is ``unsupervised`` (the agents heartbeat
their own files; no tmux sessions), so the monitor, when on, has nothing to act on.

Goal (issue 12): 10,000 agents, console CPU < 15 % of one core and p95 <= 50 ms.

    python benchmarks/churn.py [AGENTS ...] [--seconds 60] [--interval 60] [--probes 5]
        [--monitor on|off|both] [--durable] [--per-writer 12500] [--py-spy DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    CpuMeter,
    end_cleanly_on_sigterm,
    figure,
    fleet_parser,
    load,
    percentile,
    process_cpu,
    process_memory,
    run_each,
)
from _console import console_on_fleet

from runeconsole.core.files import atomic_write_bytes

TOKEN = re.compile(rb"p\d{6}")
ON_SCREEN = 30  # rows of a 160x45 pane that are surely visible (sorted: w00000 first)


# -- the writer (a separate process) -------------------------------------------------------


def my_keys(agents: int, part: int, parts: int) -> list[str]:
    """The agents writer ``part`` of ``parts`` heartbeats: the first writer has the rows on
    screen (its probes rewrite them; no other process may write them meanwhile)."""
    keys = [f"worker-w{n:05d}" for n in range(agents)]
    shown = min(agents, ON_SCREEN)
    rest = keys[shown:][part::parts]
    return keys[:shown] + rest if part == 0 else rest


def writer(
    root: Path, agents: int, interval: float, seconds: float, probes: float, durable: bool,
    part: int = 0, parts: int = 1,
) -> None:  # fmt: skip
    """Heartbeat this writer's agents once per ``interval`` for ``seconds``; every
    ``1/probes`` seconds also give an on-screen agent a new node token. Prints ``ready``,
    then ``TOKEN DONE`` per probe, then a JSON summary."""
    directory = root / ".claude" / "state" / "identities"
    keys = my_keys(agents, part, parts)
    bodies = {key: json.loads((directory / f"{key}.json").read_bytes()) for key in keys}
    pid, written = os.getpid(), 0

    def write(key: str) -> float:
        nonlocal written
        body = bodies[key]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body["last_heartbeat"] = body["last_seen"] = stamp
        data = json.dumps(body).encode()
        path = directory / f"{key}.json"
        if durable:
            atomic_write_bytes(path, data)
        else:
            temp = directory / f".{key}.json.{pid}.{written:x}.tmp"
            temp.write_bytes(data)
            os.replace(temp, path)
        written += 1
        return time.monotonic()

    print("ready", flush=True)
    start = time.monotonic()
    end = start + seconds
    beats = probes_sent = 0
    lag = 0.0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        beat_due = start + (beats + part / parts) * interval / len(keys)
        probe_due = start + (probes_sent + 0.5) / probes if probes and part == 0 else end
        if now >= probe_due:
            key = keys[probes_sent % min(agents, ON_SCREEN)]
            token = f"p{probes_sent:06d}"
            bodies[key]["node_id"] = token
            done = write(key)
            print(f"{token} {done:.6f}", flush=True)
            probes_sent += 1
        elif now >= beat_due:
            lag = max(lag, now - beat_due)
            write(keys[beats % len(keys)])
            beats += 1
        else:
            time.sleep(max(0.0, min(beat_due, probe_due, end) - now))
    wall = time.monotonic() - start
    cpu = process_cpu(pid)
    summary = {"writes": written, "wall": wall, "cpu": cpu, "lag": lag, "probes": probes_sent}
    print(json.dumps(summary), flush=True)


# -- the measurement ----------------------------------------------------------------------


class TokenWatch:
    """First arrival of each token in the console's terminal output."""

    def __init__(self) -> None:
        self.seen: dict[bytes, float] = {}
        self._tail = b""

    def __call__(self, arrival: float, data: bytes) -> None:
        chunk = self._tail + data
        for match in TOKEN.finditer(chunk):
            self.seen.setdefault(match.group(), arrival)
        self._tail = chunk[-8:]  # a token cut between two writes is found whole next time


class Writers:
    """The writer processes (one per ``--per-writer`` agents), read from threads."""

    def __init__(self, root: Path, agents: int, args: argparse.Namespace) -> None:
        parts = max(1, math.ceil(agents / args.per_writer))
        self.done: dict[bytes, float] = {}
        self.results: list[dict[str, float]] = []
        self.processes = []
        for part in range(parts):
            command = [sys.executable, __file__, "--writer", str(root), str(agents)]
            command += [str(args.interval), str(args.seconds), str(args.probes)]
            command += [str(part), str(parts)] + (["--durable"] if args.durable else [])
            self.processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
        for process in self.processes:
            assert process.stdout is not None
            ready = process.stdout.readline().strip()
            if ready != "ready":
                raise RuntimeError(f"writer did not start: {ready!r}")
        self.readers = [
            threading.Thread(target=self._follow, args=(process,), daemon=True)
            for process in self.processes
        ]
        for reader in self.readers:
            reader.start()

    def _follow(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("{"):
                self.results.append(json.loads(line))
            else:
                token, moment = line.split()
                self.done[token.encode()] = float(moment)

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for process in self.processes:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        for reader in self.readers:
            reader.join(timeout=10)

    def kill(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()

    def summary(self, target: float) -> str:
        writes = sum(r["writes"] for r in self.results)
        wall = max((r["wall"] for r in self.results), default=1e-9)
        cpu = sum(r["cpu"] for r in self.results)
        lag = max((r["lag"] for r in self.results), default=0.0)
        return (
            f"{writes / wall:.0f} writes/s (target {target:.0f}; writer processes "
            f"{len(self.processes)}, lag max {lag:.2f} s, CPU {100 * cpu / wall:.0f} %)"
        )


def one_run(agents: int, monitor: bool, args: argparse.Namespace) -> str:
    writers = None
    fleet = console_on_fleet(
        agents,
        monitor=monitor,
        kind="unsupervised",
        heartbeat_spread=args.interval,
        everything=not args.plain,
    )
    try:
        with fleet as started:
            pane = started.pane
            assert pane.pid is not None
            watch = TokenWatch()
            pane.on_output(watch)
            time.sleep(args.settle)  # the start-up tail (the monitor's first pass) is not churn
            writers = Writers(started.root, agents, args)
            server = pane.server_pid()
            server_cpu, bytes_before, before = process_cpu(server), pane.output_bytes, load()
            if args.py_spy is not None:
                label = "monitor" if monitor else "no-monitor"
                pane.py_spy(args.py_spy / f"churn-{agents}-{label}.txt", args.seconds)
            meter = CpuMeter(pane.pid)
            writers.wait(timeout=args.seconds + 60)
            cpu, wall = meter.read()
            waited = meter.waited()
            server_share = 100 * (process_cpu(server) - server_cpu) / wall
            written = (pane.output_bytes - bytes_before) / wall
            memory = process_memory(pane.pid)
            deadline = time.monotonic() + args.grace
            while set(writers.done) - set(watch.seen) and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        if writers is not None:
            writers.kill()
    done = writers.done
    millis = [(watch.seen[t] - moment) * 1000 for t, moment in done.items() if t in watch.seen]
    lost = len(done) - len(millis)
    label = "monitor on " if monitor else "--no-monitor"
    latency = "no probe seen"
    args.figures[figure("heartbeat_load", agents, monitor, "pct")] = 100 * cpu / wall
    if millis:
        args.figures[figure("change_to_screen", agents, monitor, "p95_ms")] = percentile(millis, 95)
        latency = (
            f"p50 {percentile(millis, 50):.1f} ms p95 {percentile(millis, 95):.1f} ms "
            f"max {max(millis):.0f} ms (n={len(millis)}, lost {lost})"
        )
    return (
        f"{agents:>6} agents, {label}: console CPU {100 * cpu / wall:6.1f} % of one core over "
        f"{wall:.0f} s ({cpu:.2f} CPU s; run-queue wait {waited / 100:.2f} s/s) at "
        f"{writers.summary(agents / args.interval + args.probes)}; file written -> row "
        f"repainted {latency}; RSS {memory['rss']:.0f} MB; terminal output "
        f"{written / 1024:.1f} KiB/s; tmux server {server_share:.1f} %; {before} -> {load()}  "
        "(goal < 15 %, p95 <= 50 ms)"
    )


def main() -> int:
    end_cleanly_on_sigterm()
    if sys.argv[1:2] == ["--writer"]:
        root, agents, interval, seconds, probes, part, parts = sys.argv[2:9]
        durable = "--durable" in sys.argv[9:]
        writer(
            Path(root), int(agents), float(interval), float(seconds), float(probes), durable,
            int(part), int(parts),
        )  # fmt: skip
        return 0
    parser = fleet_parser(__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the churn")
    parser.add_argument("--interval", type=float, default=60.0, help="each agent's heartbeat")
    parser.add_argument("--probes", type=float, default=5.0, help="probe writes a second")
    parser.add_argument("--settle", type=float, default=5.0, help="wait after first paint")
    parser.add_argument("--grace", type=float, default=10.0, help="wait for late probes")
    parser.add_argument("--durable", action="store_true", help="fsync each write")
    parser.add_argument("--per-writer", type=int, default=12_500, help="agents per writer process")
    return run_each(parser.parse_args(), one_run)


if __name__ == "__main__":
    raise SystemExit(main())
