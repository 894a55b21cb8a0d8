"""``say`` to the text visible in the agent's pane: p50 / p95 (goal: p95 <= 200 ms).

Each sample calls ``Replies(project).say(agent, text)`` in-process, as the console's ``m``
and ``review send`` do, with a text of its own, and stops the clock when the pane's screen
shows that text. The screen is read through one tmux control-mode client
(``benchmarks/_console.py``, ``ControlClient``), polled every millisecond without starting
a process per look: the figure is an upper bound by at most one poll.

Agents (``--agent``):

- ``claude`` (when the pinned Claude Code is installed, ``.ci/run``): the real binary in
  tmux with the hooks ``runeconsole claude install`` writes, against the Messages-API
  stand-in (``tests/support/claude_api.py``); its pane is the one its SessionStart hook
  recorded. Every message is a prompt: the next is sent once the agent is idle again.
- ``reader``: ``tests/support/paste_reader.py`` started by ``runeconsole spawn``'s
  supervisor: a program that reads pastes and echoes them at once (say's own cost, and
  tmux's, with no agent to wait for).

Also printed: the ``say`` call alone (until it returns: its tmux round trips included)
and ``runeconsole say --json`` as a process (what a script and the fleet console's SSH
route pay). Every figure line ends with the load average.

    python benchmarks/say_latency.py [--agent claude|reader|both] [--samples 40]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _common import end_cleanly_on_sigterm, load, scratch, summary  # noqa: E402
from _console import ControlClient  # noqa: E402

from runeconsole.adapters import git  # noqa: E402
from runeconsole.adapters.tmux import Tmux  # noqa: E402
from runeconsole.services.project import Project  # noqa: E402
from runeconsole.services.registry import Registry  # noqa: E402
from runeconsole.services.reply import Replies  # noqa: E402
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings  # noqa: E402

GOAL = "p95 <= 200 ms"
POLL = 0.001


def visible(control: ControlClient, target: str, text: str, timeout: float = 10.0) -> float:
    """The moment a capture of ``target`` showed ``text`` (``time.perf_counter``)."""
    deadline = time.monotonic() + timeout
    while True:
        screen = "\n".join(control.command("capture-pane", "-p", "-J", "-t", target))
        seen = time.perf_counter()
        if text in screen:
            return seen
        if time.monotonic() > deadline:
            raise SystemExit(f"{text!r} not on screen after {timeout:g}s:\n{screen}")
        time.sleep(POLL)


def measure(
    replies: Replies,
    key: str,
    control: ControlClient,
    target: str,
    samples: int,
    settle: Callable[[int], None],
) -> tuple[list[float], list[float]]:
    """(say -> visible, say call alone) in ms for ``samples`` messages."""
    shown, calls = [], []
    for n in range(samples):
        text = f"bench-say-{n:04d}: please rerun the failing test and report back"
        started = time.perf_counter()
        replies.say(key, text)
        returned = time.perf_counter()
        seen = visible(control, target, text[:40])
        shown.append((seen - started) * 1000)
        calls.append((returned - started) * 1000)
        settle(n)
    return shown, calls


def cli_say(root: Path, key: str, samples: int, settle: Callable[[int], None]) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    took = []
    for n in range(samples):
        argv = [sys.executable, "-m", "runeconsole", "say", key, f"cli-say-{n:04d} carry on"]
        started = time.perf_counter()
        done = subprocess.run(
            [*argv, "--json", "--root", str(root)], capture_output=True, text=True, env=env
        )
        took.append((time.perf_counter() - started) * 1000)
        if done.returncode:
            raise SystemExit(f"runeconsole say failed: {done.stderr.strip()}")
        settle(n)
    return took


def report(agent: str, shown: list[float], calls: list[float], cli: list[float]) -> None:
    print(summary(f"{agent}: say -> text visible in the pane", shown, GOAL), "|", load())
    print(summary(f"{agent}: say() call returns", calls, "-"), "|", load())
    print(summary(f"{agent}: runeconsole say --json (process)", cli, "-"), "|", load())


def run_reader(args: argparse.Namespace) -> None:
    with scratch("say-reader") as tmp:
        root = tmp / "project"
        git.init_repo(root)
        socket = f"rc-bench-say-{os.getpid()}"
        tmux = Tmux(socket, config_file="/dev/null")
        supervisor = Supervisor(
            Project(root), settings=SupervisorSettings(socket_name=socket), tmux=tmux
        )
        log = tmp / "read.log"
        os.environ["PYTHONPATH"] = str(REPO)  # the tmux server (and the reader) import tests
        try:
            command = [sys.executable, "-m", "tests.support.paste_reader", str(log)]
            supervisor.spawn("worker", "bench", command)
            deadline = time.monotonic() + 20
            while not log.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            argv = ["tmux", "-L", socket, "-C", "attach-session", "-t", "rune-worker-bench"]
            control = ControlClient(argv)
            control.command("set-option", "-g", "window-size", "manual")
            control.command("resize-window", "-t", "rune-worker-bench", "-x", "160", "-y", "48")
            target = "=rune-worker-bench:"
            replies = Replies(supervisor.project, supervisor=supervisor)

            def clear(_: int) -> None:
                control.command("clear-history", "-t", target)
                control.command("send-keys", "-t", target, "-R")  # a fresh screen

            shown, calls = measure(replies, "worker-bench", control, target, args.samples, clear)
            cli = cli_say(root, "worker-bench", args.cli_samples, clear)
            control.close()
            report("reader", shown, calls, cli)
        finally:
            tmux.kill_server()


def run_claude(args: argparse.Namespace) -> None:
    from tests.support.claude import install
    from tests.support.claude_binary import ClaudeSession, binary, new_project

    path, why = binary()
    if path is None:
        print(f"claude: skipped ({why})")
        return
    with scratch("say-claude") as tmp:
        root, home = new_project(tmp)
        installed = install(root)
        if installed.returncode:
            raise SystemExit(f"runeconsole claude install failed: {installed.stderr}")
        with ClaudeSession(root, home, []) as session:
            session.ready()
            registry = Registry(Project(root))

            def agent() -> dict:
                rows = [r.fields | {"key": r.key} for r in registry.list() if not r.error]
                return next((r for r in rows if r.get("role") == "claude"), {})

            deadline = time.monotonic() + 30
            while not (agent().get("claude") or {}).get("tmux") and time.monotonic() < deadline:
                time.sleep(0.05)
            key = agent()["key"]
            pane = agent()["claude"]["tmux"]["pane"]
            control = ControlClient([*session.tmux(), "-C", "attach-session", "-t", "claude"])
            replies = Replies(Project(root))

            def idle(n: int, base: int = 0) -> None:
                """Until the prompt was answered and the agent is idle (its Stop hook)."""
                session.api.wait_for_requests(base + n + 1, timeout=60)
                until = time.monotonic() + 60
                while agent().get("activity") != "idle" and time.monotonic() < until:
                    time.sleep(0.02)

            shown, calls = measure(replies, key, control, pane, args.samples, idle)
            cli = cli_say(root, key, args.cli_samples, lambda n: idle(n, args.samples))
            control.close()
            report("claude", shown, calls, cli)
            print(f"claude: {json.dumps({'requests': len(session.api.requests)})}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--agent", choices=("claude", "reader", "both"), default="both")
    parser.add_argument("--samples", type=int, default=40, help="say() samples per agent (40)")
    parser.add_argument(
        "--cli-samples", type=int, default=10, help="runeconsole say processes per agent (10)"
    )
    args = parser.parse_args()
    end_cleanly_on_sigterm()
    print(f"say latency: {args.samples} samples per agent | {load()}", flush=True)
    if args.agent in ("reader", "both"):
        run_reader(args)
    if args.agent in ("claude", "both"):
        run_claude(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
