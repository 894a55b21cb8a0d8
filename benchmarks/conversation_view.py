"""The conversation screen on a 50 MB transcript, key to screen, in a real tmux pane:
``t`` on the agent -> its conversation painted (the transcript's end, read first); the
whole read (every turn, ``turn N/M`` with M all of them); then ``g`` and ``page down``
``--steps`` times -> the conversation moved a page.

The transcript is written as Claude Code writes one (``conversation_index.py``'s writer:
prompts, the assistant's text, Bash/Read/Edit/Grep calls with their results, and the
records the console does not show, about half of the bytes), ``--megabytes`` of it, in a
Claude config dir of the benchmark's own; the agent's identity names it. The console runs
in a 160x45 pane of a private tmux server (``--no-monitor``); the screen is read back
through a tmux control-mode client about every millisecond (``_console.py``).

Goals (issue 33): first paint p95 <= 300 ms; a page down p95 <= 50 ms.

    python benchmarks/conversation_view.py [--megabytes 50] [--rounds 10] [--steps 8]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm, load, percentile, process_cpu, scratch, summary
from _console import ConsolePane
from conversation_index import Writer, session_lines

from runeconsole.adapters import git

TIMEOUT = 60.0
KEY = "worker-big"


def make_root(base: Path, megabytes: float) -> tuple[Path, Path]:
    """The project (one agent whose transcript is ``megabytes`` of JSONL); the transcript."""
    from runeconsole.services.conversations.locate import project_dir_name

    root = base / "project"
    git.init_repo(root)
    config = base / "claude-config"
    os.environ["CLAUDE_CONFIG_DIR"] = str(config)  # the console's too (the tmux server's)
    folder = config / "projects" / project_dir_name(root.resolve())
    folder.mkdir(parents=True)
    writer = Writer()
    session = str(uuid.UUID(int=writer.rng.getrandbits(128), version=4))
    path = folder / f"{session}.jsonl"
    start = datetime(2026, 9, 1, tzinfo=UTC)
    path.write_bytes(b"".join(session_lines(writer, session, int(megabytes * 1e6), start)))
    identities = root / ".claude" / "state" / "identities"
    identities.mkdir(parents=True)
    body = {
        "agent_id": f"{KEY}-20260901T000000Z",
        "role": "worker",
        "name": "big",
        "status": "terminated",
        "claude": {"session_id": session, "transcript_path": str(path)},
    }
    (identities / f"{KEY}.json").write_text(json.dumps(body))
    return root, path


def body(lines: list[str]) -> list[str]:
    """The conversation's lines (between its title and its status line)."""
    return lines[1:-3]


class Rounds:
    def __init__(self, pane: ConsolePane) -> None:
        self.pane = pane
        self.times: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.rng = random.Random(33)

    def press(self, label: str, key: str, shown, *also: str) -> float:  # type: ignore[no-untyped-def]
        time.sleep(self.rng.uniform(0.15, 0.4))
        pid = self.pane.pid
        assert pid is not None
        cpu = process_cpu(pid, children=True)
        sent = self.pane.send_keys(key)
        seen = self.pane.wait_for(shown, timeout=TIMEOUT, what=f"the effect of {label}")
        self.times.setdefault(label, []).append((seen - sent) * 1000)
        self.cpu.setdefault(label, []).append((process_cpu(pid, children=True) - cpu) * 1000)
        for other in also:  # a later effect of the same key, timed from it
            self.times.setdefault(other, [])
        return sent

    def round(self, steps: int) -> None:
        def painted(lines: list[str]) -> bool:
            return lines[0].lstrip().startswith(f"Conversation {KEY}") and any(
                "turn " in line and "/" in line for line in lines[-3:]
            )

        sent = self.press("first paint", "t", painted)

        def whole(lines: list[str]) -> bool:
            return painted(lines) and "reading the rest" not in lines[0]

        seen = self.pane.wait_for(whole, timeout=TIMEOUT, what="the whole transcript")
        self.times.setdefault("whole read", []).append((seen - sent) * 1000)
        self.press("g (top)", "g", lambda s: any("turn 1/" in line for line in s[-3:]))
        for _ in range(steps):
            top = body(self.pane.capture())
            self.press("page down", "PageDown", lambda s, t=top: body(s) != t)
        self.pane.send_keys("Escape")
        self.pane.wait_for(lambda s: "ROLE" in "".join(s[:6]), timeout=TIMEOUT)


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=8, help="page downs per round")
    args = parser.parse_args()
    with scratch("conversation-view") as base:
        root, path = make_root(base, args.megabytes)
        size = path.stat().st_size
        with ConsolePane(root, monitor=False, size=(160, 45)) as pane:
            pane.start_console()
            pane.wait_for(lambda s: "big " in "".join(s), timeout=60, what="the agent's row")
            time.sleep(2)
            before = load()
            rounds = Rounds(pane)
            for _ in range(args.rounds):
                rounds.round(args.steps)
            after = load()
    print(
        f"conversation of {size / 1e6:.1f} MB of JSONL ({args.rounds} opens, "
        f"{args.steps} page downs each); 160x45 tmux pane; {before} -> {after}"
    )
    goals = {
        "first paint": "p95 <= 300 ms",
        "page down": "p95 <= 50 ms",
        "g (top)": "(no goal)",
        "whole read": "(no goal: every turn read, in a worker, the screen usable meanwhile)",
    }
    for label, goal in goals.items():
        print(summary(f"  {label} -> screen", rounds.times[label], goal))
        cpu = rounds.cpu.get(label)
        if cpu:
            print(
                f"      console CPU meanwhile (10 ms ticks): p50 {percentile(cpu, 50):.0f} ms, "
                f"p95 {percentile(cpu, 95):.0f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
