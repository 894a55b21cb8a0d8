"""``n`` with the form filled -> the new agent's row on screen, in a real tmux pane.

The console (``runeconsole --root REPO``, monitor on unless ``--monitor off``) runs in a
160x45 pane of a private tmux server, on a git repository of ``--files`` (5,000) tracked
files in 50 directories, about 1 KB each, with an untracked ``.env`` and a local config
that ``runeconsole.worktrees.copy`` names and Claude Code's hooks installed (local
scope), as a real project has them. Claude Code is a stand-in program (a shell script
that sleeps; it answers ``claude agents --json`` with no session), so the figure is the
console's and git's, not Claude Code's start-up.

Each round, keys are sent with ``send-keys`` and the screen is read back through one
tmux control-mode client (``_console.py``), about every millisecond:

- ``n``: the Agents pane's new-task form opens (timed: ``n -> form``);
- the task is typed (``Job rNN``) and the form's name field shows the name suggested
  from it (``job-rNN``): the form is filled (not timed);
- ``ctrl+s`` starts it: ``Dispatch.new`` in the console's worker (the checks, ``git
  worktree add`` of the whole tree, the copies, the hooks, the spawn in tmux), the
  agent's identity file written, the file watch, the row drawn. Timed from handing tmux
  ``ctrl+s`` to the capture showing the row ``worker  job-rNN`` in the table (an
  upper bound, by at most one poll). Goal (issue 31): p95 <= 300 ms.

Beside it, from the files' times: ``ctrl+s`` -> the worktree's ``.git`` file (before
git: the form closing, the worker starting, the checks) -> its index written (git's
checkout) -> the row on screen (the copies, hooks, spawn, identity, file watch and
paint); and ``git worktree add`` alone, as a process, on the same repository
(``--rounds`` times): the floor git sets. Rounds are 0.2-0.5 s apart; the agents made
stay (sleeping) until the end.

``--dir DIR`` puts the repository there (``/dev/shm``: a tmpfs, without the disk's cost
of writing 5,000 files). ``--cprofile`` prints a profile of ``Dispatch.new`` in-process
on the same kind of repository (one attempt, the same stand-in, a private tmux server)
instead. ``--py-spy DIR`` records the console's stacks over the rounds.

    python benchmarks/new_agent_key.py [--rounds 20] [--files 5000] [--dir DIR]
        [--monitor on|off] [--timeout 30] [--cprofile] [--py-spy DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(REPO))

from _common import end_cleanly_on_sigterm, load, percentile, repository, scratch, summary  # noqa: E402
from _console import ConsolePane, PaneError  # noqa: E402

from runeconsole.adapters.tmux import Tmux  # noqa: E402
from runeconsole.services.dispatch.creation import NewTask  # noqa: E402
from runeconsole.services.dispatch.service import Dispatch  # noqa: E402
from runeconsole.services.project import Project  # noqa: E402
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings  # noqa: E402

GOAL = "p95 <= 300 ms"
TALISMAN = """runeconsole:
  worktrees:
    copy: [".env", "config/*.local.yml"]
"""
STAND_IN = """#!/bin/sh
# Claude Code, stood in for: no background session; an agent that sleeps.
case "$1" in agents) echo '[]'; exit 0 ;; esac
exec sleep 3600
"""


# -- the project ---------------------------------------------------------------------------


def module(n: int) -> str:
    """A small Python module (~1 KB)."""
    lines = [f'"""Module {n}."""\n', "\n"]
    lines += [f"VALUE_{n}_{k} = {k} * {n}  # step {k} of the computation\n" for k in range(20)]
    return "".join(lines)


def make_project(root: Path, files: int) -> None:
    """``files`` tracked files on main; the untracked files the copy globs name; the
    talisman; Claude Code's hooks installed (local scope), so each worktree gets them."""
    tracked = {f"src/pkg{n % 50:02d}/mod{n:05d}.py": module(n) for n in range(files - 1)}
    tracked["README.md"] = "# bench\n"
    tracked[".gitignore"] = ".env\nconfig/*.local.yml\n"  # the copies stay out of git status
    repository(root, tracked, {})
    (root / ".env").write_text("TOKEN=local-secret\n")
    (root / "config").mkdir(exist_ok=True)
    (root / "config" / "app.local.yml").write_text("debug: true\n")
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "talisman.yml").write_text(TALISMAN)
    installed = subprocess.run(
        [sys.executable, "-m", "runeconsole", "claude", "install", "--root", str(root)],
        capture_output=True, text=True, timeout=120, check=False,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )  # fmt: skip
    if installed.returncode:
        raise SystemExit(f"runeconsole claude install failed: {installed.stderr}")


def stand_in(base: Path) -> Path:
    program = base / "claude-stand-in"
    program.write_text(STAND_IN)
    program.chmod(0o755)
    return program


@contextlib.contextmanager
def place(directory: Path | None) -> Iterator[Path]:
    """A scratch dir (under ``directory`` when given), removed on the way out."""
    if directory is not None:
        tempfile.tempdir = str(directory)
    with scratch("new-key") as base:
        yield base


# -- the rounds ----------------------------------------------------------------------------


def form_open(lines: list[str]) -> bool:
    return any("New task here" in line for line in lines)


def name_shown(name: str):
    field = re.compile(rf"Name\s+{re.escape(name)}\b")
    return lambda lines: any(field.search(line) for line in lines)


def row_shown(name: str):
    """The table's row of ``worker-NAME`` (its ROLE and NAME cells; the toast that names
    the agent writes ``worker-NAME``, with no space)."""
    row = re.compile(rf"\bworker\s+{re.escape(name)}\b")
    return lambda lines: not form_open(lines) and any(row.search(line) for line in lines)


def mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class Rounds:
    def __init__(self, pane: ConsolePane, root: Path, timeout: float, poll: float) -> None:
        self.pane, self.root, self.timeout = pane, root, timeout
        self.poll = poll  # seconds between two captures while ctrl+s's row is awaited
        self.rng = random.Random(31)
        self.opened: list[float] = []  # n -> form, ms
        self.shown: list[float] = []  # ctrl+s -> row, ms
        self.before_git: list[float] = []
        self.checkout: list[float] = []
        self.after_git: list[float] = []
        # Wall clock = monotonic + offset (files' times are wall clock).
        self.offset = time.time() - time.monotonic()

    def round(self, n: int) -> None:
        pane, name = self.pane, f"job-r{n:02d}"  # short: the NAME column shows it whole
        time.sleep(self.rng.uniform(0.2, 0.5))
        sent = pane.send_keys("n")
        seen = pane.wait_for(form_open, timeout=self.timeout, what="the new-task form")
        self.opened.append((seen - sent) * 1000)
        pane.command("send-keys", "-t", "console", "-l", f"Job r{n:02d}")
        pane.wait_for(name_shown(name), timeout=self.timeout, what=f"the name {name}")
        time.sleep(0.05)
        sent = pane.send_keys("C-s")
        seen = pane.wait_for(
            row_shown(name), timeout=self.timeout, poll=self.poll, what=f"the row of {name}"
        )
        self.shown.append((seen - sent) * 1000)
        worktree = self.root / ".claude" / "worktrees" / name
        start, end = sent + self.offset, seen + self.offset
        made = mtime(worktree / ".git")
        index = mtime(self.root / ".git" / "worktrees" / name / "index")
        if made is not None and index is not None:
            self.before_git.append((made - start) * 1000)
            self.checkout.append((index - made) * 1000)
            self.after_git.append((end - index) * 1000)


def git_alone(root: Path, rounds: int) -> list[float]:
    """``git worktree add`` of main as a process, as ``Dispatch.new`` runs it (hooks off)."""
    times = []
    for n in range(rounds):
        path = root / ".claude" / "git-alone" / f"w{n:02d}"
        started = time.perf_counter()
        subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", "worktree", "add", "--quiet", "-b",
             f"bench/alone-{n}", str(path), "main"],
            cwd=root, check=True, capture_output=True, timeout=300,
        )  # fmt: skip
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(args: argparse.Namespace) -> str:
    with place(args.dir) as base:
        root = base / "project"
        made_at = time.perf_counter()
        make_project(root, args.files)
        made = time.perf_counter() - made_at
        # The tmux server, and so the console and its agents, inherit this environment.
        os.environ["RUNECONSOLE_CLAUDE"] = str(stand_in(base))
        before = load()
        with ConsolePane(root, monitor=args.monitor == "on") as pane:
            # The pane keeps its size as a window option of its own: tmux 3.3a's server
            # dies on the agents' ``new-session -d -x W -y H`` while the global option is
            # ``window-size manual`` (as ``_console.py`` sets it).
            pane.command("set-option", "-w", "-t", "console", "window-size", "manual")
            pane.command("set-option", "-gu", "window-size")
            pane.start_console()
            pane.wait_for(
                lambda lines: bool(lines) and "Quit" in lines[-1] and "runeconsole" in lines[0],
                timeout=60,
                what="the first paint",
            )
            time.sleep(3)  # past the start-up tail (the monitor's first pass)
            if args.py_spy is not None:
                args.py_spy.mkdir(parents=True, exist_ok=True)
                pane.py_spy(args.py_spy / "new-agent-key.txt", 3600)
            rounds = Rounds(pane, root, args.timeout, args.poll / 1000)
            try:
                for n in range(args.rounds):
                    rounds.round(n)
            except PaneError as exc:
                print(f"stopped: {exc}", file=sys.stderr)
            pane.stop_profilers()
        after = load()
        alone = git_alone(root, args.rounds)
        where = "tmpfs" if str(base).startswith("/dev/shm") else f"{base.parent}"
    label = f"{args.files} files ({where}), monitor {args.monitor}, poll {args.poll:g} ms"
    lines = [f"repository made in {made:.1f} s"]
    if rounds.shown:
        lines.append(summary(f"{label}: ctrl+s (form filled) -> row on screen", rounds.shown, GOAL))
    if rounds.opened:
        lines.append(summary(f"{label}: n -> the form open", rounds.opened, "-"))
    for what, values in (
        ("ctrl+s -> worktree's .git (form closed, worker, checks)", rounds.before_git),
        ("-> its index (git's checkout)", rounds.checkout),
        ("-> row on screen (copies, hooks, spawn, watch, paint)", rounds.after_git),
    ):
        if values:
            lines.append(
                f"  {what}: p50 {percentile(values, 50):.0f} ms, "
                f"p95 {percentile(values, 95):.0f} ms, mean {statistics.fmean(values):.0f} ms"
            )
    lines.append(summary("git worktree add alone, same repository", alone, "-"))
    lines.append(f"load {before} -> {after}")
    return "\n".join(lines)


# -- in-process, profiled -------------------------------------------------------------------


def profile(args: argparse.Namespace) -> str:
    """``Dispatch.new`` of one attempt, ``--rounds`` times, under cProfile: the top of it."""
    with place(args.dir) as base:
        root = base / "project"
        make_project(root, args.files)
        os.environ["RUNECONSOLE_CLAUDE"] = str(stand_in(base))
        socket = f"rc-bench-newkey-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        subprocess.run(
            ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keep",
             "sleep", "3600"],
            check=True, timeout=20,
        )  # fmt: skip
        try:
            project = Project(root)
            settings = SupervisorSettings.from_talisman(project.talisman, socket_name=socket)
            dispatch = Dispatch(project, supervisor=Supervisor(project, settings=settings))
            profiler = cProfile.Profile()
            walls = []
            for n in range(args.rounds):
                request = NewTask(text=f"Bench task p{n:02d}")
                started = time.perf_counter()
                profiler.enable()
                dispatch.new(request)
                profiler.disable()
                walls.append((time.perf_counter() - started) * 1000)
        finally:
            Tmux(socket).kill_server()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
    return summary("Dispatch.new in-process, one attempt", walls, "-") + "\n" + out.getvalue()


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--dir", type=Path, default=None, help="where the repository goes")
    parser.add_argument("--monitor", choices=("on", "off"), default="on")
    parser.add_argument("--timeout", type=float, default=30.0, help="longest wait for a key")
    parser.add_argument(
        "--poll", type=float, default=1.0, metavar="MS", help="between captures after ctrl+s"
    )
    parser.add_argument("--cprofile", action="store_true", help="Dispatch.new profiled instead")
    parser.add_argument("--py-spy", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed")
    print(profile(args) if args.cprofile else measure(args), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
