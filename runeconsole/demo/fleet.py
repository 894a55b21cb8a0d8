"""The simulated fleet: a background process that behaves like the harness's agents.

Registers the cast, heartbeats it, and plays a script so every liveness colour
appears within a minute: one agent falls silent (yellow, then red), one crashes
and is re-spawned with its predecessor, one terminates cleanly. Then it keeps the
fleet alive and crashes and re-spawns a worker now and then. Workers ask a question
every half minute; nobody waits on it, so the console's timer answers it if you don't.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import signal
import time
from pathlib import Path

from runeconsole.core.errors import RuneError
from runeconsole.demo.questions import ask_live
from runeconsole.demo.scene import CAST, CRASHED, STALE, TERMINATED, register_cast
from runeconsole.services.registry import ACTIVE, Registry

SILENT_AT = 2.0
CRASH_AT = 12.0
TERMINATE_AT = 18.0
RESPAWN_AT = 45.0
CHURN_EVERY = 40.0
QUESTION_AT = 6.0
QUESTION_EVERY = 30.0


class Fleet:
    def __init__(self, root: Path, seed: int = 7) -> None:
        self.registry = Registry(root)
        self.interval = self.registry.settings.heartbeat_interval
        self.rng = random.Random(seed)
        self.silent: set[str] = set()
        self.start = time.monotonic()
        self.next_beat: dict[str, float] = {}
        self.script = [
            (SILENT_AT, lambda: self.silent.add(STALE)),
            (CRASH_AT, lambda: self.crash(CRASHED)),
            (TERMINATE_AT, lambda: self.registry.mark_terminated(TERMINATED)),
            (RESPAWN_AT, lambda: self.respawn(CRASHED)),
        ]
        self.next_churn = RESPAWN_AT + CHURN_EVERY
        self.next_question, self.asked = QUESTION_AT, 0

    def crash(self, key: str) -> None:
        self.registry.mark_crashed(key, "tmux session vanished")

    def respawn(self, key: str) -> None:
        old = self.registry.get(key)
        self.registry.register(
            str(old.get("role")),
            str(old.get("name")),
            node_id=old.get("node_id"),
            tmux_session=f"{old.get('tmux_session')}-r",
            predecessor_id=old.get("agent_id"),
        )

    def churn(self, elapsed: float) -> None:
        workers = [f"worker-{name}" for role, name, _ in CAST if role == "worker"]
        victim = self.rng.choice([w for w in workers if w not in (STALE, TERMINATED)])
        self.crash(victim)
        self.script.append((elapsed + 15.0, lambda: self.respawn(victim)))
        self.next_churn = elapsed + CHURN_EVERY

    def step(self) -> None:
        elapsed = time.monotonic() - self.start
        due = [item for item in self.script if item[0] <= elapsed]
        for item in due:
            self.script.remove(item)
            item[1]()
        if elapsed >= self.next_churn:
            self.churn(elapsed)
        if elapsed >= self.next_question:
            ask_live(self.registry.root, self.asked)
            self.asked += 1
            self.next_question = elapsed + QUESTION_EVERY
        now = time.monotonic()
        for record in self.registry.list():
            if record.error or record.status != ACTIVE or record.key in self.silent:
                continue
            if now >= self.next_beat.get(record.key, 0.0):
                self.registry.heartbeat(record.key)
                jitter = self.rng.uniform(0.6, 1.0)
                self.next_beat[record.key] = now + self.interval * jitter

    def run(self, duration: float | None) -> None:
        register_cast(self.registry)
        stop = time.monotonic() + duration if duration else None
        while stop is None or time.monotonic() < stop:
            # A file someone else is changing: try again next round.
            with contextlib.suppress(RuneError):
                self.step()
            time.sleep(0.5)


def _stop(*_: object) -> None:
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runeconsole.demo.fleet")
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--duration", type=float, default=None)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    with contextlib.suppress(SystemExit, KeyboardInterrupt):
        Fleet(args.root).run(args.duration)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
