"""Shared by the benchmark scripts: fleets of identity files, percentiles, and what a
process costs (CPU seconds, RSS) read from ``/proc``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _figures import write_figures

from runeconsole.adapters import git
from runeconsole.core.timeutil import iso_z
from runeconsole.services.cost.ledger import local_day

# What the identities of a benchmark fleet say about their tmux sessions:
#   sessions      each names a tmux session (``rune-{key}``) that does not exist, as the
#                 fleet of issue 12 was measured: a console running the monitor marks every
#                 one crashed on its first pass (a mass crash: thousands of locked writes
#                 and signals), then has nothing left to supervise.
#   unsupervised  no tmux session recorded (agents run by another tool that heartbeat
#                 their own files): all green, nothing for the monitor to act on, no
#                 problems. The quiet steady state.
#   crashed       every agent already crashed: the state after a mass crash, with one
#                 row per agent in the Problems pane.
FLEET_KINDS = ("sessions", "unsupervised", "crashed")

# An AskUserQuestion call of one question, as the hook benchmarks send it.
QUESTION = {
    "questions": [
        {
            "question": "Which hash should the auth module use?",
            "header": "Hash",
            "multiSelect": False,
            "options": [{"label": "bcrypt"}, {"label": "argon2"}],
        }
    ]
}


# With ``everything`` (the console's every column and watcher at work, issue 35): budgets
# set, every agent's spending recorded (COST, the top line's dollars, the budget judge),
# and these agents in git worktrees of their own with a commit and an uncommitted file
# (CHANGES, the review state): rows 30-44 of the first screenful (churn.py's probes rewrite
# the first 30, and a change other than a heartbeat asks git again: not what is measured)
# and one in WORKTREE_EVERY after.
BUDGETS = "runeconsole:\n  budgets: {per_agent_usd: 50, per_day_usd: 20, fleet_day_usd: 1000000}\n"
WORKTREES_SHOWN = range(30, 45)
WORKTREE_EVERY = 500


def make_fleet(
    root: Path,
    count: int,
    *,
    kind: str = "sessions",
    heartbeat_spread: float = 0.0,
    everything: bool = False,
) -> list[str]:
    """``count`` identity files as the harness would write them; returns their keys.

    ``heartbeat_spread`` (seconds) staggers the last heartbeats evenly over that span
    before now (agent ``n`` is the oldest when ``n`` is 0), as a fleet that heartbeats on
    a cycle looks at any instant. The files are written directly, not fsynced: a
    throw-away fixture needs no durability, and 100,000 fsynced files take minutes.
    """
    if kind not in FLEET_KINDS:
        raise ValueError(f"fleet kind {kind!r}: one of {', '.join(FLEET_KINDS)}")
    git.init_repo(root)
    directory = root / ".claude" / "state" / "identities"
    directory.mkdir(parents=True, exist_ok=True)
    if everything:
        (root / ".claude" / "talisman.yml").write_text(BUDGETS)
        (root / ".git" / "info" / "exclude").write_text(".claude/\n.worktrees/\n")
    now = datetime.now(UTC)
    today = local_day(now)
    created = iso_z(now - timedelta(seconds=heartbeat_spread))
    keys = []
    for n in range(count):
        key = f"worker-w{n:05d}"
        beat = iso_z(now - timedelta(seconds=heartbeat_spread * (1 - n / max(1, count))))
        body = {
            "agent_id": f"{key}-20260226T120000Z",
            "role": "worker",
            "name": f"w{n:05d}",
            "status": "crashed" if kind == "crashed" else "active",
            "created_at": created,
            "last_heartbeat": beat,
            "last_seen": beat,
            "node_id": f"node{n % 37}",
            "metadata": {},
        }
        if kind != "unsupervised":
            body["tmux_session"] = f"rune-{key}"
        if kind == "crashed":
            body["crashed_at"] = created
            body["metadata"] = {"crashed_reason": f"tmux session rune-{key} is gone"}
        if everything:
            usd = round((n % 97) * 0.41, 2)
            body["cost"] = {"usd": usd, "today_usd": usd / 2, "day": today}
            body["cost"]["estimated"] = n % 5 == 0
            if n in WORKTREES_SHOWN or n % WORKTREE_EVERY == WORKTREE_EVERY // 2:
                body["worktree_path"] = str(worktree_with_work(root, key))
        (directory / f"{key}.json").write_text(json.dumps(body))
        keys.append(key)
    return keys


def worktree_with_work(root: Path, key: str) -> Path:
    """``key``'s worktree on a branch of its own: one commit ahead of main, one file left
    uncommitted."""
    worktree = root / ".worktrees" / key
    git_out(root, "worktree", "add", "--quiet", "-b", f"agent/{key}", str(worktree))
    (worktree / "work.py").write_text(f"# {key}'s work\nvalue = 1\n")
    git_out(worktree, "add", "work.py")
    git_out(worktree, "commit", "--quiet", "-m", f"{key}: work")
    (worktree / "notes.md").write_text("uncommitted\n")
    return worktree


def git_out(cwd: Path, *args: str, data: str | None = None) -> str:
    """What ``git ARGS`` prints in ``cwd`` (raises if it fails)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, input=data, capture_output=True, text=True, check=True, timeout=600
    ).stdout.strip()


def repository(
    root: Path, main_files: dict[str, str], branches: dict[str, tuple[str, dict[str, str]]]
) -> None:
    """A repository whose ``main`` holds ``main_files`` (checked out, ``.claude/`` kept out
    of ``git status``) and one-commit branches off it (``{branch: (message, files)}``),
    written by one ``git fast-import``."""
    root.mkdir(parents=True)
    git_out(root, "init", "--quiet", "--initial-branch=main")
    git_out(root, "config", "user.email", "bench@example.invalid")
    git_out(root, "config", "user.name", "bench")
    stream = ["commit refs/heads/main", "mark :1", "committer b <b@b> 1700000000 +0000"]
    stream += ["data 4", "base"]
    for path, body in main_files.items():
        stream += [f"M 100644 inline {path}", f"data {len(body)}", body]
    for branch, (message, files) in branches.items():
        stream += [f"commit refs/heads/{branch}", "committer b <b@b> 1700000001 +0000"]
        stream += [f"data {len(message)}", message, "from :1"]
        for path, body in files.items():
            stream += [f"M 100644 inline {path}", f"data {len(body)}", body]
    git_out(root, "fast-import", "--quiet", data="\n".join(stream) + "\n")
    git_out(root, "checkout", "--quiet", "main")
    (root / ".git" / "info" / "exclude").write_text(".claude/\n")


def end_cleanly_on_sigterm() -> None:
    """``kill PID`` runs the ``finally`` blocks (temp dirs, tmux servers, writer processes)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temp dir, removed on the way out even if a process still dying writes into it."""
    path = Path(tempfile.mkdtemp(prefix=f"runeconsole-{prefix}-"))
    try:
        yield path
    finally:
        for _ in range(20):
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                break
            time.sleep(0.25)


def numbers(doc: str | None, **defaults: int | list[int]) -> argparse.Namespace:
    """Positional whole numbers, each optional with its default (a list default: any
    count of them), and ``--help`` from the script's docstring."""
    parser = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0])
    for name, default in defaults.items():
        count = "*" if isinstance(default, list) else "?"
        parser.add_argument(name, type=int, nargs=count, default=default, help=f"({default})")
    return parser.parse_args()


def fleet_parser(description: str) -> argparse.ArgumentParser:
    """Fleet sizes, ``--monitor both|on|off``, ``--py-spy DIR``, ``--plain`` and ``--json
    PATH``: what every benchmark of the console in a pane takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("agents", type=int, nargs="*", default=[10_000])
    parser.add_argument("--monitor", choices=("both", "on", "off"), default="both")
    parser.add_argument("--py-spy", type=Path, default=None, metavar="DIR")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="identity files alone (no budgets, costs or worktrees: the fleets before issue 35)",
    )
    parser.add_argument(
        "--json", type=Path, default=None, metavar="PATH", help="the figures, for guard.py"
    )
    return parser


def run_each(
    args: argparse.Namespace, one_run: Callable[[int, bool, argparse.Namespace], str]
) -> int:
    """``one_run`` for every fleet size and monitor mode asked for, each printed at once;
    with ``--json PATH`` what each run put in ``args.figures`` written there."""
    args.figures = {}
    before = load()
    for agents in args.agents:
        for monitor in monitor_modes(args):
            print(one_run(agents, monitor, args), flush=True)
    write_figures(getattr(args, "json", None), args.figures, before, load())
    return 0


def figure(name: str, agents: int, monitor: bool = True, unit: str = "") -> str:
    """A figure's name in ``--json`` (``idle_10k_pct``; ``…_no_monitor`` without it)."""
    size = f"{agents // 1000}k" if agents % 1000 == 0 else str(agents)
    return "_".join(part for part in (name, size, unit, "" if monitor else "no_monitor") if part)


def monitor_modes(args: argparse.Namespace) -> tuple[bool, ...]:
    """The ``--monitor`` choice as the runs to make (and ``--py-spy``'s DIR made)."""
    if args.py_spy is not None:
        args.py_spy.mkdir(parents=True, exist_ok=True)
    return {"both": (True, False), "on": (True,), "off": (False,)}[args.monitor]


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(label: str, millis: list[float], goal: str) -> str:
    return (
        f"{label}: n={len(millis)} p50={percentile(millis, 50):.1f} ms "
        f"p95={percentile(millis, 95):.1f} ms max={max(millis):.1f} ms "
        f"mean={statistics.fmean(millis):.1f} ms  (goal {goal})"
    )


# -- what a process costs ---------------------------------------------------------------


def process_cpu(pid: int, *, children: bool = False) -> float:
    """User + system CPU seconds of a process (all its threads), from /proc (Linux);
    ``children`` adds those of its children it has waited for (the tmux clients the
    monitor runs)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def process_memory(pid: int) -> dict[str, float]:
    """``rss`` and its peak ``hwm`` in MB, from /proc/PID/status."""
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            figures["rss" if name == "VmRSS" else "hwm"] = int(value.split()[0]) / 1024
    return figures


def load() -> str:
    """The load averages, as ``uptime`` prints them (others share the machine's cores)."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def process_waited(pid: int) -> float:
    """Seconds the process's threads spent ready to run but waiting for a core (the
    scheduler's run-queue wait, /proc/PID/task/*/schedstat): how much others' load held
    it back. Threads that ended meanwhile are not counted."""
    waited = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            waited += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return waited / 1e9


class CpuMeter:
    """A process's CPU over a span of wall time, as a share of one core, and the time
    its threads waited for a core meanwhile."""

    def __init__(self, pid: int, *, children: bool = True) -> None:
        self.pid = pid
        self.children = children
        self.start()

    def start(self) -> None:
        self.cpu0 = process_cpu(self.pid, children=self.children)
        self.waited0 = process_waited(self.pid)
        self.wall0 = time.monotonic()

    def waited(self) -> float:
        """Run-queue wait since ``start``, summed over the threads, as % of the wall time
        (above 100 when several threads waited at once)."""
        wall = time.monotonic() - self.wall0
        return 100 * (process_waited(self.pid) - self.waited0) / wall if wall > 0 else 0.0

    def read(self) -> tuple[float, float]:
        """(CPU seconds, wall seconds) since ``start``."""
        cpu = process_cpu(self.pid, children=self.children) - self.cpu0
        return cpu, time.monotonic() - self.wall0

    def percent(self) -> float:
        cpu, wall = self.read()
        return 100 * cpu / wall if wall > 0 else 0.0


@contextlib.contextmanager
def three_sources_over_ssh(agents: int, prefix: str) -> Iterator[tuple[object, list[Path], list]]:
    """A private sshd (as the tests start one) and three roots of ``agents`` identity files
    each (two to reach over SSH, one local): ``(sshd, roots, keys per root)``. Exits with
    the reason when sshd is not installed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.sshd import find_sshd, start_sshd

    binary = find_sshd()
    if binary is None:
        sys.exit("sshd is not installed (Debian: openssh-server)")
    base = Path(tempfile.mkdtemp(prefix=prefix))
    roots = [base / name for name in ("alpha", "beta", "here")]
    keys = [make_fleet(root, agents) for root in roots]
    running = start_sshd(binary)
    try:
        yield next(running), roots, keys
    finally:
        running.close()
        shutil.rmtree(base, ignore_errors=True)
