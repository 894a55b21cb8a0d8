"""tmux session killed -> the row turns red in the console (goal <= 2 s) -> re-spawned (<= 5 s).

The real console runs headless (Textual ``run_test``) with the monitor inside it, as
``runeconsole`` runs it, over a fake agent on a private tmux server. Each trial kills
the agent's session at a random moment of the monitor's cycle and times, on the
console itself:

- with auto-respawn off: when the agent's row shows it crashed (status ``crashed``,
  liveness red); the operator's re-spawn that follows is not timed;
- with auto-respawn on: when the console shows the crash (its alert, or the red row
  if it is drawn before the successor replaces it), when the successor's row is
  active, and when the successor has drawn its first screen.

    python benchmarks/crash_respawn.py [--trials 10] [--interval 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Callable

from tmux_fleet import Fleet, fleet, percentiles

from runeconsole.core.errors import RuneError
from runeconsole.core.files import atomic_write_bytes
from runeconsole.tui.console.app import RuneConsole, create_app

KEY = "worker-bench"
TALISMAN = """\
runeconsole:
  tmux:
    socket_name: {socket}
  supervisor:
    monitor_interval_seconds: {interval}
    auto_respawn: {auto}
    respawn_limit: {limit}
"""


async def until(probe: Callable[[], object], timeout: float = 30.0) -> float:
    """Seconds on the monotonic clock when ``probe`` first holds (polled every 5 ms while
    the console's event loop runs)."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise SystemExit("the console never showed it; is tmux working?")
        await asyncio.sleep(0.005)
    return time.monotonic()


def row(app: RuneConsole) -> tuple[str, str, str]:
    """(status, liveness, agent id) of the bench agent's row as the console holds it."""
    record = app.agents_pane.records.get(KEY)
    if record is None or not app.agents_pane.table.has(KEY):
        return ("", "", "")
    status = str(app.agents_pane.table.get_cell(KEY, "status"))
    return (status, record.liveness, str(record.get("agent_id")))


def screen(f: Fleet) -> str:
    """The agent's pane ("" until its session exists: the row is registered first)."""
    try:
        return f.tmux.capture(f"=rune-{KEY}:")
    except RuneError:
        return ""


def crash_alerts(app: RuneConsole) -> int:
    return sum(1 for n in app._notifications if n.message == f"{KEY} crashed")


def crash_shown(app: RuneConsole, alerts_before: int) -> Callable[[], bool]:
    """A new crash alert, or the red row (drawn before the successor replaces it)."""
    return lambda: crash_alerts(app) > alerts_before or row(app)[:2] == ("crashed", "red")


def successor_active(app: RuneConsole, old_id: str) -> Callable[[], bool]:
    return lambda: row(app)[0] == "active" and row(app)[2] != old_id


async def trials(f: Fleet, count: int, interval: float, auto: bool) -> dict[str, list[float]]:
    talisman = TALISMAN.format(
        socket=f.tmux.socket_name, interval=interval, auto=str(auto).lower(), limit=count + 1
    )
    atomic_write_bytes(f.root / ".claude" / "talisman.yml", talisman.encode())
    times: dict[str, list[float]] = {"red": [], "alert": [], "active": [], "drawn": []}
    app = create_app(f.root, monitor=True, rescan_seconds=60)
    rng = random.Random(5)
    async with app.run_test(size=(120, 30)):
        await until(lambda: row(app)[0] == "active")
        for _ in range(count):
            await asyncio.sleep(1.2 + rng.uniform(0, interval))
            _, _, old_id = row(app)
            alerts = crash_alerts(app)
            killed = time.monotonic()
            f.tmux.kill_session(f"rune-{KEY}")
            if not auto:
                red = await until(lambda: row(app)[:2] == ("crashed", "red"))
                times["red"].append(red - killed)
                app.supervisor.respawn(KEY)
                await until(successor_active(app, old_id))
                continue
            alert = await until(crash_shown(app, alerts))
            times["alert"].append(alert - killed)
            active = await until(successor_active(app, old_id))
            times["active"].append(active - killed)
            drawn = await until(lambda: "Resuming." in screen(f))
            times["drawn"].append(drawn - killed)
    return times


async def bench(count: int, interval: float | None) -> None:
    with fleet() as f:
        every = interval or f.supervisor.settings.monitor_interval
        f.supervisor.spawn("worker", "bench", f.agent_command(KEY, "--tick", "0.5"))
        manual = await trials(f, count, every, auto=False)
        auto = await trials(f, count, every, auto=True)
    print(f"console with its monitor inside (interval {every:g}s), {count} kills each way")
    print(f"auto-respawn off: killed -> row red:            {percentiles(manual['red'])}")
    print("                  (goal <= 2 s)")
    print(f"auto-respawn on:  killed -> crash shown:        {percentiles(auto['alert'])}")
    print(f"                  killed -> successor row active: {percentiles(auto['active'])}")
    print(f"                  killed -> successor drawn:      {percentiles(auto['drawn'])}")
    print("                  (goal <= 5 s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--interval", type=float, default=None, help="monitor interval (s)")
    args = parser.parse_args()
    asyncio.run(bench(args.trials, args.interval))


if __name__ == "__main__":
    main()
