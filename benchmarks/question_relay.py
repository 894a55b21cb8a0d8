"""Latency of the question relay, end to end, with real processes.

1. ``ask`` writes a question -> the row is in the console's Questions pane.
   The write is timed by a separate process watching the directory (inotify, so
   the figure is low by that watcher's own delay, about 1 ms).
2. A key pressed in the answer modal -> the waiting ``ask`` process prints the
   answer (timed where its stdout arrives).
3. ``runeconsole status-line``: its own work in-process, and the whole process.

Run from the repository root: ``python benchmarks/question_relay.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runeconsole.adapters import git  # noqa: E402
from runeconsole.adapters.fswatch import DirWatcher  # noqa: E402
from runeconsole.cli import main as cli_main  # noqa: E402
from runeconsole.services.project import Project  # noqa: E402
from runeconsole.services.worker_questions import AskRequest, Questions  # noqa: E402
from runeconsole.tui.console.app import create_app  # noqa: E402
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane  # noqa: E402

SIGNAL_DIR = "rune-work-bench"


def percentiles(label: str, seconds: list[float], goal_ms: float | None = None) -> None:
    ordered = sorted(s * 1000 for s in seconds)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]

    goal = f"  (goal p95 <= {goal_ms:g} ms)" if goal_ms else ""
    print(
        f"{label}: n={len(ordered)}  p50 {at(0.5):.1f} ms  p95 {at(0.95):.1f} ms  "
        f"max {ordered[-1]:.1f} ms{goal}"
    )


def watch_creations(directory: str, conn: Connection) -> None:
    """Child process: report when each ``.question`` file appears (monotonic clock)."""

    def seen(path: Path) -> None:
        if path.name.endswith(".question"):
            conn.send((path.name, time.perf_counter()))

    watcher = DirWatcher([Path(directory)], seen)
    watcher.start()
    conn.send(("ready", 0.0))
    conn.recv()  # until told to stop
    watcher.stop()


def env_for(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["CLAUDE_CONFIG_DIR"] = str(tmp / "claude")
    return env


def start_ask(root: Path, env: dict[str, str], task: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "runeconsole", "question", "ask", "--root", str(root)]
    command += ["--task", task, "--question", "bcrypt or argon2?", "--option", "A: bcrypt"]
    command += ["--option", "B: argon2", "--signal-dir", SIGNAL_DIR, "--timeout", "600"]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )


def first_line_at(process: subprocess.Popen[str], arrived: dict[str, float]) -> threading.Thread:
    def read() -> None:
        assert process.stdout is not None
        line = process.stdout.readline()
        arrived["t"] = time.perf_counter()
        arrived["line"] = line  # type: ignore[assignment]

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


async def relay(root: Path, tmp: Path, samples: int) -> tuple[list[float], list[float]]:
    directory = root / "tmp" / ".rune-signals" / SIGNAL_DIR
    directory.mkdir(parents=True, mode=0o700)
    parent, child = multiprocessing.get_context("fork").Pipe()
    watcher = multiprocessing.get_context("fork").Process(
        target=watch_creations, args=(str(directory), child)
    )
    watcher.start()
    parent.recv()
    env = env_for(tmp)
    to_pane: list[float] = []
    to_ask: list[float] = []
    app = create_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        app.goto_pane("questions")
        pane = app.query_one(LocalQuestionsPane)
        shown: dict[str, float] = {}
        apply_changes = pane.apply_changes

        def timed_apply(paths: set[Path]) -> None:
            apply_changes(paths)
            now = time.perf_counter()
            for key in pane.records:
                shown.setdefault(key, now)

        pane.apply_changes = timed_apply  # type: ignore[method-assign]
        for index in range(samples):
            task = f"task-{index}"
            key = f"{SIGNAL_DIR}/{task}.q1"
            process = start_ask(root, env, task)
            name, written = parent.recv()
            assert name == f"{task}.q1.question", name
            while key not in shown:
                await asyncio.sleep(0.001)
            to_pane.append(shown[key] - written)

            pane.select(key)
            await pilot.press("a")
            arrived: dict[str, float] = {}
            reader = first_line_at(process, arrived)
            pressed = time.perf_counter()
            await pilot.press("B")
            while reader.is_alive():
                await asyncio.sleep(0.001)
            assert arrived["line"].startswith("ANSWER: B: argon2"), arrived  # type: ignore[union-attr]
            to_ask.append(arrived["t"] - pressed)
            process.wait(timeout=10)
            await pilot.pause(0.05)
    parent.send("stop")
    watcher.join(timeout=10)
    return to_pane, to_ask


def status_line(root: Path, tmp: Path, runs: int) -> tuple[list[float], list[float]]:
    own, whole = [], []
    for _ in range(runs):
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            cli_main(["status-line", "--root", str(root)])
        own.append(time.perf_counter() - start)
    command = [sys.executable, "-m", "runeconsole", "status-line", "--root", str(root)]
    for _ in range(max(5, runs // 5)):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env_for(tmp), timeout=30, check=True)
        whole.append(time.perf_counter() - start)
    return own, whole


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="runeconsole-bench-") as name:
        tmp = Path(name)
        root = tmp / "project"
        git.init_repo(root)
        to_pane, to_ask = asyncio.run(relay(root, tmp, args.samples))
        percentiles("ask writes question -> row in Questions pane", to_pane, 50)
        percentiles("key in modal -> ask prints the answer     ", to_ask, 100)
        questions = Questions(Project(root))
        for index in range(args.samples):
            questions.ask(
                AskRequest(f"open-{index}", "q?", ["A: x", "B: y"], signal_dir=SIGNAL_DIR)
            )
        own, whole = status_line(root, tmp, 50)
        files = f"{args.samples} open and {args.samples} answered questions"
        percentiles(f"status-line own work ({files})", own, 100)
        percentiles("status-line whole process (python startup included)", whole)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
