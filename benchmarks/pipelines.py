"""The Pipelines pane at its scale: 100 pipelines of 50 nodes each, beside a fleet.

A project with ``AGENTS`` agents and ``PIPELINES`` DOT pipelines of ``NODES`` nodes (as
the harness writes them: a chain of codergen nodes with a human gate and a rework edge,
each pipeline with its signal directory), the console in a 160x45 pane of a private
tmux server (the monitor on unless ``--no-monitor``; every watcher it has is on). Figures:

- first paint of the pane: the key that shows it (``8``) -> its rows on screen;
- a node change -> screen: one pipeline's DOT rewritten as ``pipeline_runner`` does (a
  temp file renamed over it), one node's status moved; from the rename to the row
  showing it, ``--rounds`` times (p50, p95);
- idle CPU added: the console on the same fleet without the pipelines, then with them,
  each over ``--seconds`` once settled; the difference, as a share of one core.

Goals (issue 32): change -> screen p95 <= 100 ms; idle CPU added < 0.3 %.

    python benchmarks/pipelines.py [--pipelines 100] [--nodes 50] [--agents 200]
        [--rounds 20] [--seconds 30] [--no-monitor]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools

from _common import CpuMeter, end_cleanly_on_sigterm, load, make_fleet, percentile, scratch
from _console import ConsolePane, first_complete_paint

PANE_KEY = "8"
NODE = """    n{n:03d} [
        shape=box
        label="Step {n}\\nof {name}"
        handler="codergen"
        bead_id="bd-{name}-{n}"
        worker_type="backend-solutions-engineer"
        acceptance="AC-{n} [auto]: step {n} works"
        status="{status}"
        style=filled
        fillcolor=lightyellow
    ];
"""


def dot_text(name: str, nodes: int, done: int) -> str:
    """A harness-shaped DOT: start, ``nodes - 4`` work steps, a gate, a decision, exit."""
    parts = [
        f'digraph "PRD-{name.upper()}" {{\n    graph [\n        label="{name}"\n'
        f'        prd_ref="PRD-{name.upper()}"\n        cobuilder_root="/srv/shop"\n    ];\n',
        '    start [shape=Mdiamond handler="start" status="validated"];\n',
    ]
    steps = nodes - 4
    for n in range(steps):
        status = "accepted" if n < done else ("active" if n == done else "pending")
        parts.append(NODE.format(n=n, name=name, status=status))
    parts.append(
        '    review [shape=hexagon handler="wait.human" status="pending" '
        'acceptance="AC-R [manual]: reviewed"];\n'
        '    decide [shape=diamond handler="conditional" status="pending"];\n'
        '    finalize [shape=Msquare handler="exit" status="pending"];\n'
    )
    chain = ["start", *(f"n{n:03d}" for n in range(steps)), "review", "decide", "finalize"]
    parts += [f"    {a} -> {b};\n" for a, b in itertools.pairwise(chain)]
    parts.append('    decide -> n000 [condition="fail" style="dashed" label="rework"];\n}\n')
    return "".join(parts)


def make_pipelines(root: Path, count: int, nodes: int) -> list[Path]:
    directory = root / ".pipelines" / "pipelines"
    (directory / "signals").mkdir(parents=True, exist_ok=True)
    paths = []
    for p in range(count):
        name = f"pl-{p:03d}"
        path = directory / f"{name}.dot"
        path.write_text(dot_text(name, nodes, p % (nodes - 4)))
        (directory / "signals" / name / "processed").mkdir(parents=True, exist_ok=True)
        paths.append(path)
    return paths


def rewrite(path: Path, text: str) -> float:
    """As ``pipeline_runner`` writes: a temp file, then renamed over; when it was done."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return time.monotonic()


def row_of(lines: list[str], name: str) -> str | None:
    return next((line for line in lines if f" {name} " in f" {line} "), None)


def settle(pane: ConsolePane, agents: int) -> None:
    pane.wait_for(first_complete_paint(agents), timeout=120 + agents / 100, what="first paint")
    time.sleep(3)


def idle_cpu(pane: ConsolePane, seconds: float) -> float:
    assert pane.pid is not None
    meter = CpuMeter(pane.pid)
    time.sleep(seconds)
    return meter.percent()


def measure(args: argparse.Namespace) -> dict[str, object]:
    figures: dict[str, object] = {}
    with scratch("pipelines") as base:
        root = base / "fleet"
        make_fleet(root, args.agents, kind="unsupervised")
        with ConsolePane(root, monitor=args.monitor, size=(160, 45)) as pane:
            pane.start_console()
            settle(pane, args.agents)
            figures["idle_without"] = idle_cpu(pane, args.seconds)
        paths = make_pipelines(root, args.pipelines, args.nodes)
        with ConsolePane(root, monitor=args.monitor, size=(160, 45)) as pane:
            pane.start_console()
            settle(pane, args.agents)
            figures["idle_with"] = idle_cpu(pane, args.seconds)
            shown = pane.send_keys(PANE_KEY)
            last = paths[min(len(paths), 30) - 1].stem
            painted = pane.wait_for(
                lambda s: row_of(s, "pl-000") is not None and row_of(s, last) is not None,
                timeout=60,
                what="the pipelines' rows",
            )
            figures["pane_paint_ms"] = (painted - shown) * 1000
            latencies = []
            target = paths[0]
            for n in range(args.rounds):
                before = row_of(pane.capture(), target.stem)
                done = rewrite(target, dot_text(target.stem, args.nodes, 1 + n % 20))
                seen = pane.wait_for(
                    lambda s, b=before: row_of(s, target.stem) not in (None, b),
                    timeout=30,
                    what="the changed row",
                )
                latencies.append((seen - done) * 1000)
                time.sleep(0.3)
            figures["change_ms"] = latencies
            if not pane.console_alive():
                raise RuntimeError("the console exited during the run")
    return figures


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--no-monitor", dest="monitor", action="store_false")
    args = parser.parse_args()
    before = load()
    figures = measure(args)
    after = load()
    change = figures["change_ms"]
    assert isinstance(change, list)
    with_idle, without_idle = figures["idle_with"], figures["idle_without"]
    assert isinstance(with_idle, float) and isinstance(without_idle, float)
    print(
        f"{args.pipelines} pipelines x {args.nodes} nodes beside {args.agents} agents, "
        f"{'monitor on' if args.monitor else '--no-monitor'}; {before} -> {after}\n"
        f"  first paint of the pane ({PANE_KEY} -> rows): {figures['pane_paint_ms']:.0f} ms\n"
        f"  a node change -> screen: p50 {percentile(change, 50):.0f} ms, "
        f"p95 {percentile(change, 95):.0f} ms, max {max(change):.0f} ms "
        f"over {len(change)} (goal p95 <= 100 ms)\n"
        f"  idle CPU over {args.seconds:g} s: without {without_idle:.2f} %, with "
        f"{with_idle:.2f} %: the pipelines add {with_idle - without_idle:+.2f} % of one core "
        "(goal < 0.3 %)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
