"""The regression guard: the console's speed figures in a few minutes, against the
committed baseline.

Runs the benchmarks that hold the console's goals (issue 35), each with ``--json`` into a
temp dir, and prints one table: each figure, its goal, the baseline's value
(``benchmarks/baseline.json``), this run's, and the change. Exits 1 when a figure is
worse than the baseline beyond noise, 0 otherwise (a figure over its goal but no worse
than the baseline is shown, not failed: the goal is the issue's, the guard's business is
the next regression).

Noise. Each figure has a tolerance (``Figure.rel`` and ``abs``: a regression is worse
than ``baseline x (1 + rel) + abs``, set from the spread of repeated runs on the 2-core
machine these were written on). A p95 of a few rounds is its worst key or the one
before it, and moves by half between quiet runs of the same code: it is shown against
its goal, and a change is judged by its median (``Figure.judged``), shown beside it.
Before and after each benchmark the guard also times a fixed piece of pure Python
(``calibrate``, best of nine, thread CPU) and prints it against the baseline's: it is
information, not a correction. A shared 2-core machine ran that piece in 31 ms and,
minutes later and as quiet, in 72, and the benchmarks' figures did not follow it (a
scaling by it read a quiet run of the same code as 12 regressions). Ratios measured in one
run (the merge queue's batched / sequential) are compared as they are. The load average
before and after each benchmark is printed: above the machine's core count the
latencies are upper bounds, and a run that failed under load is worth repeating.

It is not a timed test and CI does not run it. Run it before resolving anything that
touches the console's paths, and quote its table in the closing note:

    python benchmarks/guard.py                     # every benchmark (about 8 minutes)
    python benchmarks/guard.py --only keys,churn   # some of them
    python benchmarks/guard.py --write-baseline    # this run becomes benchmarks/baseline.json
    python benchmarks/guard.py --out run.json      # this run's figures kept

A benchmark that fails or times out is reported with its output's last lines, and counts
as a regression of each of its figures.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline.json"


@dataclass(frozen=True)
class Figure:
    name: str  # as the benchmark's --json names it
    label: str
    goal: float | None  # at most this (None: shown only)
    unit: str
    rel: float  # noise: a regression is worse than baseline x (1 + rel) + abs
    abs: float
    judged: str | None = None  # the figure a change is judged by (a p95's median), if not it

    @property
    def judge(self) -> str:
        return self.judged or self.name

    def allowed(self, baseline: float) -> float:
        return baseline * (1 + self.rel) + self.abs


@dataclass(frozen=True)
class Bench:
    key: str
    argv: tuple[str, ...]
    figures: tuple[Figure, ...]
    timeout: float


def key_figure(name: str, label: str, goal: float | None = 50.0) -> Figure:
    return p95(f"key_{name}_50k", f"50,000 agents: {label} p95", goal, 0.3, 10)


def p95(stem: str, label: str, goal: float | None, rel: float, abs: float) -> Figure:
    """A p95 of a few rounds, shown against its goal, a change judged by the median."""
    return Figure(f"{stem}_p95_ms", label, goal, "ms", rel, abs, judged=f"{stem}_p50_ms")


BENCHES = (
    Bench(
        "cold",
        ("cold_start.py", "10000", "--monitor", "on", "--runs", "3", "--fleet", "unsupervised"),
        (
            Figure("first_rows_10k_s", "10,000 agents: first rows", 0.8, "s", 0.15, 0.05),
            Figure("cpu_to_first_rows_10k_s", "10,000 agents: CPU to them", None, "s", 0.15, 0.05),
        ),
        300,
    ),
    Bench(
        "idle",
        ("idle_cpu.py", "10000", "--monitor", "on", "--settle", "10", "--seconds", "20"),
        (Figure("idle_10k_pct", "10,000 agents: idle CPU", 1.5, "%", 0.3, 0.3),),
        300,
    ),
    Bench(
        "churn",
        ("churn.py", "10000", "--monitor", "on", "--seconds", "30"),
        (
            Figure("heartbeat_load_10k_pct", "10,000 heartbeating: CPU", 10.0, "%", 0.2, 1.0),
            Figure(
                "change_to_screen_10k_p95_ms", "10,000: change -> screen p95", 40.0, "ms", 0.3, 10
            ),
        ),
        400,
    ),
    Bench(
        "keys",
        ("key_latency.py", "50000", "--monitor", "on", "--rounds", "8"),
        (
            key_figure("j", "j"),
            key_figure("pagedown", "page down"),
            key_figure("ctrl_home", "ctrl+home"),
            key_figure("slash", "/ (filter open)"),
            key_figure("filter", "a filter character"),
            key_figure("escape", "escape (filter cleared)"),
            key_figure("pane_switch", "pane switch"),
            key_figure("enter", "enter (detail open)"),
            key_figure("close", "escape (detail closed)", None),
        ),
        900,
    ),
    Bench(
        "review",
        ("review_screen.py", "--rounds", "5"),
        (
            Figure("review_first_open_ms", "the console's first review", None, "ms", 0.6, 50),
            p95("review_after_change", "review after a change p95", 150, 0.4, 20),
            p95("review_nothing_moved", "review, nothing moved p95", 150, 0.4, 15),
            p95("review_next_file", "review: n p95", 50, 0.4, 10),
            p95("review_page_down", "review: page down p95", 50, 0.4, 10),
            p95("review_huge_file", "review: 20,000 lines p95", 300, 0.4, 30),
        ),
        600,
    ),
    Bench(
        "serve",
        ("serve_latency.py", "1000", "20", "1"),
        (
            Figure("served_key_p95_ms", "served: j/k p95", 100, "ms", 0.3, 15),
            Figure("served_pane_switch_p95_ms", "served: pane switch p95", 100, "ms", 0.3, 20),
        ),
        400,
    ),
    Bench(
        "queue",
        ("merge_queue_throughput.py",),
        (
            Figure("queue_ratio_32", "queue: batched / sequential", 0.30, "", 0, 0.04),
            Figure("queue_ratio_ideal_32", "queue: rules-only ideal", None, "", 0, 0.03),
        ),
        900,
    ),
)


def calibrate() -> float:
    """Milliseconds of thread CPU for a fixed piece of pure Python (parsing, formatting,
    sorting, dicts: what the console does), best of nine: the least disturbed by others
    on the machine."""
    data = json.dumps([{"key": f"worker-w{n:05d}", "seen": n * 7 % 1000} for n in range(2000)])
    best = float("inf")
    for _ in range(9):
        start = time.thread_time()
        for _ in range(15):
            rows = json.loads(data)
            rows.sort(key=lambda row: (row["seen"], row["key"]))
            text = "".join(f"{row['key']:>14} {row['seen']:>5}\n" for row in rows)
            assert len(text) > 0
        best = min(best, time.thread_time() - start)
    return best * 1000


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


def run_bench(bench: Bench, workdir: Path) -> tuple[dict[str, float], str]:
    """The benchmark's figures, and a note (the load around it, or why it failed)."""
    out = workdir / f"{bench.key}.json"
    before = load()
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / bench.argv[0]), *bench.argv[1:], "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=bench.timeout,
        )
    except subprocess.TimeoutExpired:
        return {}, f"timed out after {bench.timeout:.0f} s"
    took = time.monotonic() - started
    if done.returncode != 0 or not out.exists():
        tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
        return {}, f"failed (exit {done.returncode}): {tail}"
    figures = json.loads(out.read_text()).get("figures", {})
    return figures, f"{took:.0f} s, load {before} -> {load()}"


def show(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit in ("ms", "%"):
        return f"{value:.1f}{' ' + unit if unit == 'ms' else ' %'}"
    return f"{value:.2f}{' ' + unit if unit else ''}"


def compare(
    figures: dict[str, float], baseline: dict[str, float], selected: list[Bench]
) -> tuple[list[list[str]], int]:
    """One row a figure: shown as it is (a p95 with its median in brackets), a change
    judged by ``Figure.judge`` against the baseline's, an excess by the shown value."""
    rows, regressions = [], 0
    for bench in selected:
        for fig in bench.figures:
            now = figures.get(fig.name)
            judged_now, judged_base = figures.get(fig.judge), baseline.get(fig.judge)
            goal = "-" if fig.goal is None else f"<= {show(fig.goal, fig.unit)}"
            if now is None or judged_now is None:
                verdict, change = "MISSING", "-"
                regressions += 1
            elif judged_base is None:
                verdict, change = "new", "-"
            else:
                change = (
                    f"{100 * (judged_now - judged_base) / judged_base:+.0f} %"
                    if judged_base
                    else "-"
                )
                worse = judged_now > fig.allowed(judged_base)
                regressions += worse
                verdict = "REGRESSED" if worse else "ok"
            if now is not None and fig.goal is not None and now > fig.goal:
                verdict += ", over goal"
            shown = [shown_with_median(figures, fig), shown_with_median(baseline, fig)]
            rows.append([fig.label, goal, shown[1], shown[0], change, verdict])
    return rows, regressions


def shown_with_median(figures: dict[str, float], fig: Figure) -> str:
    value = show(figures.get(fig.name), fig.unit)
    if fig.judged is None or fig.judged not in figures:
        return value
    return f"{value} (p50 {figures[fig.judged]:.1f})"


def table(rows: list[list[str]]) -> str:
    head = ["figure", "goal", "baseline", "now", "change", "verdict"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help=f"some of: {','.join(b.key for b in BENCHES)}")
    parser.add_argument("--write-baseline", action="store_true", help="save this run as baseline")
    parser.add_argument("--out", type=Path, default=None, help="this run's figures, as JSON")
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    args = parser.parse_args()
    wanted = {key for key in args.only.split(",") if key}
    unknown = wanted - {b.key for b in BENCHES}
    if unknown:
        parser.error(f"no benchmark {', '.join(sorted(unknown))}")
    selected = [b for b in BENCHES if not wanted or b.key in wanted]
    saved = json.loads(args.baseline.read_text()) if args.baseline.exists() else {}
    baseline = saved.get("figures", {})
    # As an installed package has it: with PYTHONDONTWRITEBYTECODE set (this machine's
    # default), a module edited since its bytecode was written is compiled on every start.
    compileall.compile_dir(HERE.parent / "runeconsole", quiet=1)
    base_calibration = saved.get("calibration_ms")
    if not isinstance(base_calibration, dict):
        base_calibration = {}
    print(f"{os.cpu_count()} cores, load {load()}", flush=True)
    figures: dict[str, float] = {}
    notes, calibration = {}, {}
    with tempfile.TemporaryDirectory(prefix="runeconsole-guard-") as workdir:
        for bench in selected:
            print(f"  {bench.key}: {' '.join(bench.argv)} …", end=" ", flush=True)
            before = calibrate()
            found, note = run_bench(bench, Path(workdir))
            calibration[bench.key] = (before + calibrate()) / 2  # the machine meanwhile
            was = base_calibration.get(bench.key)
            speed = f"; calibration x{calibration[bench.key] / was:.2f} of the baseline's"
            figures.update({k: v for k, v in found.items() if isinstance(v, int | float)})
            notes[bench.key] = note
            print(f"{note}{speed if was else ''}", flush=True)
    rows, regressions = compare(figures, baseline, selected)
    print()
    print(table(rows))
    record = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_head(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "calibration_ms": {key: round(ms, 2) for key, ms in calibration.items()},
        "notes": notes,
        "figures": {k: round(v, 4) for k, v in figures.items()},
    }
    if args.out is not None:
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    if args.write_baseline:
        if wanted and saved:  # a partial run replaces only its own figures
            record["figures"] = {**baseline, **record["figures"]}
            record["calibration_ms"] = {**base_calibration, **record["calibration_ms"]}
        args.baseline.write_text(json.dumps(record, indent=2) + "\n")
        print(f"\nbaseline written: {args.baseline}")
        return 0
    verdict = f"{regressions} figure(s) regressed beyond noise" if regressions else "no regression"
    print(f"\n{verdict} (against {args.baseline.name} of {saved.get('commit', '-')})")
    return 1 if regressions else 0


def git_head() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "-"


if __name__ == "__main__":
    raise SystemExit(main())
