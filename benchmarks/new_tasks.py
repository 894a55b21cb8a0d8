"""``runeconsole new``: what making a task's worktrees and starting its agents costs.

Three parts (``--part``, all by default), each line ending with the load:

- ``create``: ``new --count 8`` in a fresh repository of ``--files`` files (5,000, about
  20 MB checked out) per run: eight branches ``agent/worker-…`` and worktrees under
  ``.claude/worktrees/``, the untracked files ``runeconsole.worktrees.copy`` names (``.env``,
  ``config/*.local.yml``) copied, the hooks ``runeconsole claude install`` wrote made active
  in each, no setup command, and each attempt's agent started in tmux on a private server.
  The agent is a stand-in claude program (``$RUNECONSOLE_CLAUDE``: a script that sleeps),
  so the figure is ours and git's. Timed: the CLI as a process (``runeconsole new …
  --tmux-socket S``, interpreter start included), ``runeconsole task list`` as a process
  (that start alone), and ``Dispatch.new`` in-process with its steps (the checks, ``git
  worktree add``, ``info/exclude``, the copies, the hooks, the spawn; the rest is the task
  file and the journal). Beside it, git alone on the same repository: eight ``git worktree
  add -b`` one after another, all eight at once, one after another with git's parallel
  checkout (``-c checkout.workers=0``: a worker per core), and eight ``--no-checkout`` ones
  (no files written). Medians of ``--runs``. ``--cprofile`` prints one in-process run's
  profile. ``--dir /dev/shm`` takes the disk out of the picture: writing the 40,000 files
  of eight checkouts is most of the time on a slow disk.
  Goal (issue 31): all eight worktrees ready <= 3 s.

- ``claude``: Enter -> the task's first request at the Messages-API stand-in, with the real
  Claude Code (the pinned binary ``.ci/run`` installs; skipped, saying why, without it):
  ``runeconsole new --count 1 --permission-mode acceptEdits`` as a process, ``--samples``
  times (``--in-process``: ``Dispatch.new``, as the console's form calls it), each in a
  fresh worktree of a ``--files`` repository; the clock starts as the process is started
  and stops as the stand-in receives the session's first main-loop request. Split at the
  moment Claude Code's process was forked by tmux (its start time in ``/proc``, 10 ms
  ticks): the time before it (interpreter, worktree, copies, hooks, spawn) and Claude
  Code's own start-up to its first request. Each session is ended before the next.

- ``idle``: the console's idle CPU at ``--agents`` (10,000) agents, as ``idle_cpu.py``
  measures it (a real console in a 160x45 pane of a private tmux server, monitor on, CPU
  from ``/proc`` over ``--seconds`` from the first complete paint), on the same fleet
  three ways: as it is; with ``--tasks`` (50) more agents started plainly (``spawn``, the
  stand-in program, no worktree); with ``--tasks`` tasks made by ``Dispatch.new`` (one
  attempt each: a worktree of a ``--idle-files`` repository, its agent the stand-in in
  tmux). The middle figure separates what the tasks cost from what 50 more live tmux
  agents cost the monitor.

    python benchmarks/new_tasks.py [--part create|claude|idle|all] [--dir DIR] [--runs 5]
        [--files 5000] [--count 8] [--cprofile] [--samples 10] [--in-process]
        [--agents 10000] [--tasks 50] [--idle-files 1000] [--seconds 30]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(REPO))

from _common import (  # noqa: E402
    CpuMeter,
    end_cleanly_on_sigterm,
    git_out,
    load,
    make_fleet,
    percentile,
    process_memory,
    repository,
    scratch,
)
from _console import ConsolePane, status_counts  # noqa: E402

from runeconsole.adapters import agent_worktrees  # noqa: E402
from runeconsole.adapters.tmux import Tmux  # noqa: E402
from runeconsole.services.dispatch import creation, worktree_prep  # noqa: E402
from runeconsole.services.dispatch.creation import NewTask  # noqa: E402
from runeconsole.services.dispatch.service import Dispatch  # noqa: E402
from runeconsole.services.project import Project  # noqa: E402
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings  # noqa: E402

GOAL_CREATE = "all eight ready <= 3 s"
TALISMAN = """runeconsole:
  worktrees:
    copy: [".env", "config/*.local.yml"]
"""


# -- the repository and the stand-in ---------------------------------------------------------


def module(n: int) -> str:
    """A small Python module (~1 KB)."""
    lines = [f'"""Module {n}."""\n', "\n"]
    lines += [f"VALUE_{n}_{k} = {k} * {n}  # step {k} of the computation\n" for k in range(20)]
    return "".join(lines)


def make_repo(root: Path, files: int) -> None:
    """``files`` tracked files on main, in 50 directories; the untracked ``.env`` and a
    local config the copy globs name; the talisman; the hooks installed (local scope)."""
    tracked = {f"src/pkg{n % 50:02d}/mod{n:05d}.py": module(n) for n in range(files - 1)}
    tracked["README.md"] = "# bench\n"
    repository(root, tracked, {})
    (root / ".env").write_text("TOKEN=local-secret\n")
    (root / "config").mkdir(exist_ok=True)
    (root / "config" / "app.local.yml").write_text("debug: true\n")
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "talisman.yml").write_text(TALISMAN)
    env = os.environ | {"PYTHONPATH": str(REPO)}
    installed = subprocess.run(
        [sys.executable, "-m", "runeconsole", "claude", "install", "--root", str(root)],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    if installed.returncode:
        raise SystemExit(f"runeconsole claude install failed: {installed.stderr}")


def stand_in(base: Path) -> Path:
    """A claude program that sleeps: the agent costs nothing while we measure."""
    program = base / "claude-stand-in"
    program.write_text("#!/bin/sh\nexec sleep 3600\n")
    program.chmod(0o755)
    return program


@contextlib.contextmanager
def private_tmux(env: dict[str, str] | None = None) -> Iterator[str]:
    """A private tmux server (started with ``env``: every session inherits it), killed on
    the way out with every session on it."""
    socket = f"rc-bench-new-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    started = {k: v for k, v in (env or os.environ).items() if k not in ("TMUX", "TMUX_PANE")}
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keep",
         "sleep", "36000"],
        env=started, check=True, timeout=20,
    )  # fmt: skip
    try:
        yield socket
    finally:
        Tmux(socket).kill_server()


def dispatch(root: Path, socket: str) -> Dispatch:
    project = Project(root)
    settings = SupervisorSettings.from_talisman(project.talisman, socket_name=socket)
    return Dispatch(project, supervisor=Supervisor(project, settings=settings))


def cli(root: Path, env: dict[str, str], *args: str) -> tuple[float, str]:
    """``runeconsole ARGS --root ROOT`` as a process: (wall seconds, stdout)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "runeconsole", *args, "--root", str(root)],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"runeconsole {' '.join(args)} failed: {done.stderr or done.stdout}")
    return wall, done.stdout


class Steps:
    """Wall time spent in named functions of the creation, summed over a ``new``."""

    TARGETS: list[tuple[str, object, str]] = [
        ("checks", creation.Creator, "_checked"),
        ("worktree add", agent_worktrees, "add_worktree"),
        ("exclude", agent_worktrees, "exclude"),
        ("copy", worktree_prep, "copy_files"),
        ("hooks", worktree_prep, "install_hooks"),
        ("spawn", creation.Creator, "_start"),
    ]

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    @contextlib.contextmanager
    def watching(self) -> Iterator[Steps]:
        originals = []
        for label, owner, name in self.TARGETS:
            original = getattr(owner, name)
            originals.append((owner, name, original))
            setattr(owner, name, self._timed(label, original))
        try:
            yield self
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)

    def _timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[label] = self.spent.get(label, 0.0) + time.perf_counter() - started

        return timed


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def git_alone(root: Path, count: int) -> dict[str, float]:
    """git's own time on ``root``: ``count`` worktrees added one after another, all at once,
    one after another with git's parallel checkout, and without a checkout; each set removed
    after (and what a failed add left)."""
    base = git_out(root, "rev-parse", "HEAD")
    where = root / ".claude" / "bench-git"
    figures = {}

    def paths(label: str) -> list[tuple[Path, str]]:
        return [(where / f"{label}-{n}", f"bench/{label}-{n}") for n in range(count)]

    def remove(made: list[tuple[Path, str]]) -> None:
        for path, branch in made:
            git_out(root, "worktree", "remove", "--force", str(path))
            git_out(root, "branch", "-D", branch)
        git_out(root, "worktree", "prune")
        for ref in git_out(
            root, "for-each-ref", "--format=%(refname)", "refs/heads/bench/"
        ).split():
            git_out(root, "update-ref", "-d", ref)  # a branch a failed add left

    made = paths("seq")
    started = time.perf_counter()
    for path, branch in made:
        git_out(root, "worktree", "add", "--quiet", "-b", branch, str(path), base)
    figures["sequential"] = time.perf_counter() - started
    remove(made)

    made = paths("par")
    started = time.perf_counter()
    command = ["git", "worktree", "add", "--quiet", "-b"]
    running = [
        subprocess.Popen([*command, branch, str(path), base], cwd=root, stderr=subprocess.PIPE)
        for path, branch in made
    ]
    errors = [p.stderr.read().decode().strip() for p in running if p.wait(timeout=300)]
    figures["parallel"] = time.perf_counter() - started
    if errors:  # git's locks: concurrent adds to one repository can refuse each other
        figures["parallel failures"] = float(len(errors))
        print(f"  git worktree add, {count} at once: {len(errors)} failed: {errors[0]}")
    remove([(path, branch) for path, branch in made if path.is_dir()])

    made = paths("workers")
    started = time.perf_counter()
    for path, branch in made:
        git_out(root, "-c", "checkout.workers=0", "worktree", "add", "--quiet", "-b", branch,
                str(path), base)  # fmt: skip
    figures["parallel checkout"] = time.perf_counter() - started
    remove(made)

    made = paths("noco")
    started = time.perf_counter()
    for path, branch in made:
        git_out(root, "worktree", "add", "--quiet", "--no-checkout", "-b", branch, str(path), base)
    figures["no checkout"] = time.perf_counter() - started
    remove(made)
    return figures


def part_create(args: argparse.Namespace) -> None:
    count = args.count
    print(
        f"new --count {count}, {args.files} files, {args.runs} runs, stand-in claude | {load()}",
        flush=True,
    )
    cli_walls, start_walls, in_walls, steps_all, gits = [], [], [], [], []
    with scratch("new-create") as base:
        program = stand_in(base)
        env = os.environ | {"PYTHONPATH": str(REPO), "RUNECONSOLE_CLAUDE": str(program)}
        os.environ["RUNECONSOLE_CLAUDE"] = str(program)
        for run in range(args.runs):
            # Each first every other run; every repository kept to the end: removing one's
            # 45,000 files slows the disk for the next run's writes.
            order = ("cli", "in-process") if run % 2 == 0 else ("in-process", "cli")
            for how in order:
                root = base / f"repo-{run}-{how}"
                make_repo(root, args.files)
                with private_tmux(env) as socket:
                    if how == "cli":
                        wall, out = cli(
                            root, env, "new", "--task", "Speed up the parser",
                            "--count", str(count), "--tmux-socket", socket, "--json",
                        )  # fmt: skip
                        task = json.loads(out)
                        cli_walls.append(wall)
                        start_walls.append(cli(root, env, "task", "list")[0])
                    else:
                        steps = Steps()
                        request = NewTask("Speed up the parser", count=count)
                        with steps.watching():
                            started = time.perf_counter()
                            made = dispatch(root, socket).new(request)
                            in_walls.append(time.perf_counter() - started)
                        task = made.to_json()
                        steps_all.append(steps.spent)
                        gits.append(git_alone(root, count))
                    states = [a["state"] for a in task["attempts"]]
                    if states != ["started"] * count:
                        raise SystemExit(f"attempts not all started: {states}")
                    for attempt in task["attempts"]:
                        worktree = Path(attempt["worktree"])
                        for wanted in (
                            ".env",
                            "config/app.local.yml",
                            ".claude/settings.local.json",
                        ):
                            if not (worktree / wanted).is_file():
                                raise SystemExit(f"{worktree / wanted} is missing")
            print(
                f"  run {run + 1}: CLI {cli_walls[-1]:.2f} s, in-process {in_walls[-1]:.2f} s "
                f"| {load()}",
                flush=True,
            )
        if args.cprofile:
            root = base / "repo-profile"
            make_repo(root, args.files)
            with private_tmux(env) as socket:
                profile = cProfile.Profile()
                profile.enable()
                dispatch(root, socket).new(NewTask("Speed up the parser", count=count))
                profile.disable()
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(35)
            print(text.getvalue())
    labels = [label for label, _, _ in Steps.TARGETS]
    step_medians = {label: median([s.get(label, 0.0) for s in steps_all]) for label in labels}
    rest = median(in_walls) - sum(step_medians.values())
    shown = ", ".join(f"{label} {1000 * v:.0f}" for label, v in step_medians.items())
    print(
        f"new --count {count} ({args.files} files): CLI median {median(cli_walls):.2f} s "
        f"(min {min(cli_walls):.2f}, max {max(cli_walls):.2f}); its start alone (`task list`) "
        f"{median(start_walls):.2f} s; Dispatch.new in-process median {median(in_walls):.2f} s "
        f"(min {min(in_walls):.2f}, max {max(in_walls):.2f})  (goal: {GOAL_CREATE})"
    )
    print(
        f"  in-process steps, median ms over the {count} attempts: {shown}, rest {1000 * rest:.0f}"
    )
    git_medians = {k: median([g[k] for g in gits if k in g]) for k in gits[0]} if gits else {}
    print(
        "  git alone, "
        + ", ".join(f"{k} {v:.2f} s" for k, v in git_medians.items())
        + f" ({count} worktrees) | {load()}"
    )


# -- Enter to the first request, real Claude Code ----------------------------------------------


def boot_seconds() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def process_started(pid: int) -> float:
    """When the process was forked, on the boot-time clock (``/proc/PID/stat`` field 22)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")


def part_claude(args: argparse.Namespace) -> None:
    from tests.support.claude_api import MessagesApi, Turn, text_turn
    from tests.support.claude_binary import binary
    from tests.support.claude_tasks import prepare_home, session_environment, working_directory

    path, why = binary()
    if path is None:
        print(f"claude: skipped ({why})")
        return

    class Stamped(MessagesApi):
        """The stand-in, stamping each main-loop request's arrival by working directory."""

        def __init__(self) -> None:
            super().__init__([])
            self.first: dict[str, float] = {}

        def next_turn(self, body: dict[str, Any]) -> Turn:
            arrived = boot_seconds()
            place = working_directory(body) or "?"
            with self.lock:
                self.first.setdefault(place, arrived)
                self.turn_served.notify_all()
            return text_turn("Done.")

        def wait_first(self, place: str, timeout: float) -> float:
            with self.lock:
                if not self.turn_served.wait_for(lambda: place in self.first, timeout):
                    raise SystemExit(f"no request from {place} after {timeout}s")
                return self.first[place]

    how = "Dispatch.new in-process" if args.in_process else "runeconsole new as a process"
    print(
        f"Enter -> first request, real Claude Code, {how}, {args.samples} samples, "
        f"{args.files} files | {load()}",
        flush=True,
    )
    totals, befores, owns, clis = [], [], [], []
    with scratch("new-claude") as base, Stamped() as api:
        root, home = base / "project", base / "home"
        make_repo(root, args.files)
        prepare_home(home, root, [])
        env = session_environment(home, api.url, path, "")
        env["PYTHONPATH"] = str(REPO)
        del env["RUNECONSOLE_TMUX_SOCKET"]  # not in the sessions' environment
        with private_tmux(env) as socket:
            env["RUNECONSOLE_TMUX_SOCKET"] = socket
            os.environ["RUNECONSOLE_CLAUDE"] = str(path)
            tmux = Tmux(socket)
            for sample in range(args.samples):
                name = f"enter{sample}"
                place = str(root / ".claude" / "worktrees" / name)
                started = boot_seconds()
                if args.in_process:
                    request = NewTask("Say hello", name=name, permission_mode="acceptEdits")
                    task = dispatch(root, socket).new(request).to_json()
                else:
                    cli(
                        root, env, "new", "--task", "Say hello", "--name", name,
                        "--permission-mode", "acceptEdits", "--tmux-socket", socket,
                    )  # fmt: skip
                    task = {}
                returned = boot_seconds()
                first = api.wait_first(place, timeout=120)
                pane = tmux.pane(f"rune-worker-{name}")
                if pane is None or pane.pid is None:
                    raise SystemExit(f"no tmux session for {name}")
                spawned = process_started(pane.pid)
                totals.append(first - started)
                befores.append(spawned - started)
                owns.append(first - spawned)
                clis.append(returned - started)
                del task
                print(
                    f"  {sample + 1}: {1000 * (first - started):.0f} ms = before the spawn "
                    f"{1000 * (spawned - started):.0f} + Claude Code {1000 * (first - spawned):.0f}"
                    f" (new returned after {1000 * (returned - started):.0f}) | {load()}",
                    flush=True,
                )
                tmux.kill_session(f"rune-worker-{name}")
                time.sleep(1.0)  # its SessionEnd hook, before the next sample
    share = [own / total for own, total in zip(owns, totals, strict=True)]
    print(
        f"Enter -> first request ({how}): p50 {percentile(totals, 50):.2f} s, "
        f"p95 {percentile(totals, 95):.2f} s; before the spawn p50 {percentile(befores, 50):.2f} "
        f"/ p95 {percentile(befores, 95):.2f} s; Claude Code's own start-up p50 "
        f"{percentile(owns, 50):.2f} / p95 {percentile(owns, 95):.2f} s "
        f"(share p50 {100 * percentile(share, 50):.0f} %); `new` returned p50 "
        f"{percentile(clis, 50):.2f} s | {load()}"
    )


# -- the console's idle CPU, with and without tasks ------------------------------------------


def painted(total: int) -> Callable[[list[str]], bool]:
    def done(lines: list[str]) -> bool:
        return sum(status_counts(lines)) == total and bool(lines) and "Quit" in lines[-1]

    return done


def commit_files(root: Path, files: int) -> None:
    for n in range(files):
        path = root / f"src/pkg{n % 50:02d}/mod{n:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module(n))
    git_out(root, "add", "src")
    git_out(root, "commit", "--quiet", "-m", "source")
    (root / ".git" / "info" / "exclude").write_text(".claude/\n")


def idle_run(args: argparse.Namespace, program: Path, extra: str) -> str:
    agents, tasks = args.agents, args.tasks if extra != "none" else 0
    with scratch("new-idle") as base:
        root = base / "fleet"
        make_fleet(root, agents, kind="unsupervised")
        commit_files(root, args.idle_files)
        # The agents on a server of their own (the console's monitor follows each agent's
        # recorded server): tmux 3.3a's server exits on a second ``new-session -x -y``
        # once ``window-size`` is ``manual``, as the console's pane server has it.
        with private_tmux() as socket, ConsolePane(root, monitor=True) as pane:
            made = time.perf_counter()
            if extra == "tasks":
                tasked = dispatch(root, socket)
                for n in range(tasks):
                    tasked.new(NewTask(f"Task number {n}", name=f"task{n:03d}"))
            elif extra == "agents":
                supervisor = dispatch(root, socket).supervisor
                for n in range(tasks):
                    supervisor.spawn("worker", f"plain{n:03d}", [str(program)])
            made = time.perf_counter() - made
            pane.start_console()
            pane.wait_for(painted(agents + tasks), timeout=120 + agents / 200, what="first paint")
            assert pane.pid is not None
            before = load()
            meter = CpuMeter(pane.pid)
            shares = []
            for _ in range(args.slices):
                slice_meter = CpuMeter(pane.pid)
                time.sleep(args.seconds / args.slices)
                shares.append(slice_meter.percent())
            cpu, wall = meter.read()
            waited = meter.waited()
            memory = process_memory(pane.pid)
            if not pane.console_alive():
                raise RuntimeError("the console exited during the window")
            worktrees = len(git_out(root, "worktree", "list", "--porcelain").split("\n\n"))
    what = {
        "none": "no task",
        "agents": f"+{tasks} plain agents (stand-in in tmux, no worktree)",
        "tasks": f"+{tasks} tasks ({worktrees - 1} worktrees of {args.idle_files} files, "
        "agents the stand-in in tmux)",
    }[extra]
    per_slice = " ".join(f"{share:.1f}" for share in shares)
    return (
        f"{agents} agents, {what}: console CPU {100 * cpu / wall:.1f} % of one core over "
        f"{wall:.0f} s after first paint (per {args.seconds / args.slices:g} s: {per_slice}); "
        f"run-queue wait {waited / 100:.2f} s/s; RSS {memory['rss']:.0f} MB; made in "
        f"{made:.1f} s; {before} -> {load()}  (goal: unchanged by tasks)"
    )


def part_idle(args: argparse.Namespace) -> None:
    print(f"idle CPU, {args.agents} agents, monitor on, {args.seconds:g} s | {load()}", flush=True)
    with scratch("new-idle-program") as base:
        program = stand_in(base)
        os.environ["RUNECONSOLE_CLAUDE"] = str(program)
        for extra in args.idle:
            print(idle_run(args, program, extra), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--part", choices=("create", "claude", "idle", "all"), default="all")
    parser.add_argument("--runs", type=int, default=5, help="create: runs (5)")
    parser.add_argument("--files", type=int, default=5000, help="create, claude: files (5000)")
    parser.add_argument("--count", type=int, default=8, help="create: attempts (8)")
    parser.add_argument("--cprofile", action="store_true", help="create: profile one run")
    parser.add_argument(
        "--dir", type=Path, help="where the repositories and fleets go (default: TMPDIR)"
    )
    parser.add_argument("--samples", type=int, default=10, help="claude: samples (10)")
    parser.add_argument("--in-process", action="store_true", help="claude: Dispatch.new")
    parser.add_argument("--agents", type=int, default=10_000, help="idle: fleet (10000)")
    parser.add_argument("--tasks", type=int, default=50, help="idle: tasks (50)")
    parser.add_argument("--idle-files", type=int, default=1000, help="idle: files (1000)")
    parser.add_argument("--seconds", type=float, default=30.0, help="idle: window (30)")
    parser.add_argument("--slices", type=int, default=6, help="idle: CPU per slice")
    parser.add_argument(
        "--idle",
        nargs="+",
        choices=("none", "agents", "tasks"),
        default=["none", "agents", "tasks"],
        help="idle: which fleets, in order (none agents tasks)",
    )
    args = parser.parse_args()
    if args.dir is not None:
        tempfile.tempdir = str(args.dir)  # the scratch dirs of create and claude
    end_cleanly_on_sigterm()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed")
    for part in ("create", "claude", "idle"):
        if args.part in (part, "all"):
            {"create": part_create, "claude": part_claude, "idle": part_idle}[part](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
