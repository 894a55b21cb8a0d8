"""Claude Code's status line through ``runeconsole claude statusline``, timed as Claude Code
runs it: the installed ``statusLine`` command, a whole process, over the user's own.

The user's own status line (a shell one-liner reading the JSON, as most are) is timed
alone, ``/bin/sh -c THEIRS`` with the JSON on stdin, and through ours (``claude install``
chained it), in alternation so both see the same load. Printed: p50 and p95 of each, and
what ours adds (goal: p95 <= 30 ms added), for three kinds of input:

1. ``unchanged``: the JSON says what was recorded already (Claude Code redraws its line
   far more often than the figures move): nothing is written;
2. ``cost moved``: the session's cost grew since the last line: the identity, the agent's
   ledger and the fleet's day are written (under their locks, fsynced);
3. ``ours alone``: no status line of the user's: ours records, then is printed (timed
   against the bare interpreter, ``python -c pass``, for scale).

With a line of the user's, ours hands the recording to a process of its own and waits
only for theirs; the CPU figures count the process and what it waited for.

The package's bytecode is compiled first, as ``pip install`` leaves it.
Run from the repository root: ``python benchmarks/statusline.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._common import load, percentile  # noqa: E402
from runeconsole.adapters import git  # noqa: E402
from runeconsole.adapters.claude_settings import settings_path  # noqa: E402
from runeconsole.services.claude.install.install import plan_install  # noqa: E402

SESSION = "5b2c7f10-bench"
THEIRS = "printf 'main · %s\\n' \"$(head -c 24)\""
FIXTURE = REPO / "tests" / "fixtures" / "claude_statusline" / "after-a-turn.json"


class Project:
    def __init__(self, base: Path, theirs: str | None) -> None:
        self.root = base / "project"
        git.init_repo(self.root)
        settings = settings_path("local", self.root)
        settings.parent.mkdir(parents=True, exist_ok=True)
        if theirs is not None:
            settings.write_text(json.dumps({"statusLine": {"type": "command", "command": theirs}}))
        plan_install(settings).apply()
        installed = json.loads(settings.read_text())
        self.ours = installed["statusLine"]["command"]
        self.hook = shlex.split(installed["hooks"]["Stop"][0]["hooks"][0]["command"])
        self.env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "CLAUDE_PROJECT_DIR": str(self.root),
            "CLAUDE_CONFIG_DIR": str(base / "claude"),
        }
        start = {"session_id": SESSION, "cwd": str(self.root), "transcript_path": "",
                 "hook_event_name": "SessionStart", "source": "startup",
                 "model": "claude-opus-5-5"}  # fmt: skip
        subprocess.run(self.hook, input=json.dumps(start).encode(), env=self.env, check=True)
        text = FIXTURE.read_text().replace("$SESSION", SESSION).replace("$CWD", str(self.root))
        self.data = json.loads(text.replace("$TRANSCRIPT", "").replace("$PROMPT", "p"))
        self.cpu: list[float] = []

    def line(self, usd: float) -> bytes:
        return json.dumps(
            {**self.data, "cost": {**self.data["cost"], "total_cost_usd": usd}}
        ).encode()

    def run(self, command: str, data: bytes) -> float:
        """Wall seconds of one status line; its CPU seconds (the process and what it waited
        for: the user's command, not a recording handed to a process of its own) are
        appended to ``self.cpu``."""
        used, started = children_cpu(), time.perf_counter()
        result = subprocess.run(
            ["/bin/sh", "-c", command], input=data, capture_output=True, env=self.env,
            cwd=self.root, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        self.cpu.append(children_cpu() - used)
        assert result.returncode == 0 and result.stdout and not result.stderr, result
        return seconds


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def paired(
    project: Project, samples: int, moving: bool
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Theirs alone and through ours, one after the other, ``samples`` times: wall and CPU
    seconds of each."""
    alone, chained, alone_cpu, chained_cpu = [], [], [], []
    usd = 1.0
    for _ in range(samples):
        usd += 0.0238 if moving else 0.0
        data = project.line(usd)
        alone.append(project.run(THEIRS, data))
        alone_cpu.append(project.cpu[-1])
        chained.append(project.run(project.ours, data))
        chained_cpu.append(project.cpu[-1])
        time.sleep(0.05)  # a status line is redrawn at most every few hundred ms
    return alone, chained, alone_cpu, chained_cpu


def ms(values: list[float], pct: float) -> float:
    return percentile([v * 1000 for v in values], pct)


def report(
    label: str,
    base_label: str,
    base: list[float],
    ours: list[float],
    base_cpu: list[float],
    ours_cpu: list[float],
) -> None:
    added = [b - a for a, b in zip(base, ours, strict=True)]
    print(
        f"{label}: n={len(ours)}  {base_label} p50 {ms(base, 50):.1f} / p95 {ms(base, 95):.1f} ms"
        f"  through ours p50 {ms(ours, 50):.1f} / p95 {ms(ours, 95):.1f} ms"
        f"  added: p95-p95 {ms(ours, 95) - ms(base, 95):.1f} ms, per pair p50 "
        f"{ms(added, 50):.1f} / p95 {ms(added, 95):.1f} ms  (goal <= 30 ms added)"
    )
    print(
        f"  CPU time (user + system): {base_label} p50 {ms(base_cpu, 50):.1f} / p95 "
        f"{ms(base_cpu, 95):.1f} ms, through ours p50 {ms(ours_cpu, 50):.1f} / p95 "
        f"{ms(ours_cpu, 95):.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=60)
    args = parser.parse_args()
    compileall.compile_dir(REPO / "runeconsole", quiet=1)  # as an installed wheel has it
    print(f"before: {load()}")
    with tempfile.TemporaryDirectory(prefix="runeconsole-bench-") as name:
        chained = Project(Path(name) / "chained", THEIRS)
        chained.run(chained.ours, chained.line(1.0))  # recorded once: now unchanged
        report("unchanged ", "theirs", *paired(chained, args.samples, moving=False))
        report("cost moved", "theirs", *paired(chained, args.samples, moving=True))
        alone = Project(Path(name) / "alone", None)
        bare, ours, bare_cpu, ours_cpu = [], [], [], []
        for index in range(args.samples):
            data = alone.line(1.0 + 0.0238 * index)
            bare.append(alone.run(shlex.join([sys.executable, "-c", "pass"]) + "; echo", data))
            bare_cpu.append(alone.cpu[-1])
            ours.append(alone.run(alone.ours, data))
            ours_cpu.append(alone.cpu[-1])
        report("ours alone", "python -c pass", bare, ours, bare_cpu, ours_cpu)
    print(f"after: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
