"""The harness's pipeline files (``tests/interop/pipeline``, its README says how each
scenario was made) as project roots: the whole final state, one scenario alone, or a
scenario as it was while its runner waited at the human gate. Copies are made writable
(the fixtures may be read-only)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.paths import TESTS

FIXTURES = TESTS / "interop" / "pipeline"
WRITTEN = FIXTURES / "harness-written"
AT_GATE = FIXTURES / "harness-written-at-gate"
PIPELINES = Path(".pipelines") / "pipelines"
RUNS = Path(".claude") / "attractor" / "pipelines"
# The README's scenarios, by their letter: the DOT stem each one wrote.
SCENARIOS = {
    "A": "auth-demo",
    "B": "gate-demo",
    "B2": "gate-cli-demo",
    "C": "gate-pass-demo",
    "D": "gate-reject-demo",
    "E": "engine-demo",
    "F": "engine-fallthrough-demo",
    "G": "tdd-ci-demo",
}
STEMS = sorted(SCENARIOS.values())  # every pipeline of the harness's final state


def make_writable(path: Path) -> None:
    for directory, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            entry = Path(directory) / name
            if not entry.is_symlink():
                entry.chmod(entry.stat().st_mode | stat.S_IWUSR)
    path.chmod(path.stat().st_mode | stat.S_IWUSR)


def whole_root(tmp_path: Path, source: Path = WRITTEN, name: str = "root") -> Path:
    """Every scenario's files together, as the harness left ``/srv/shop``."""
    root = tmp_path / name
    shutil.copytree(source, root)
    make_writable(root)
    return root


def belongs(stem: str, relative: Path) -> bool:
    """Whether a fixture file (relative to the root) is one of scenario ``stem``'s."""
    parts = relative.parts
    if relative.parent == PIPELINES:
        name = relative.name
        return (
            name == f"{stem}.dot"
            or name.startswith(f"{stem}.dot.")
            or name.startswith(f"{stem}-checkpoint-")
        )
    if parts[:3] == (*PIPELINES.parts, "signals"):
        if len(parts) == 4:  # the CLI's exit-node signals, beside the runners' directories
            return parts[3].startswith(f"{stem}-") and parts[3].endswith(".signal")
        return parts[3] == stem
    if parts[:3] == RUNS.parts and len(parts) > 3:
        return parts[3].startswith(f"{stem}-run-") and parts[3][len(stem) + 5 :].isalnum()
    return False


def copy_scenario(source: Path, stem: str, root: Path) -> None:
    for directory, _, files in os.walk(source):
        for name in files:
            path = Path(directory) / name
            relative = path.relative_to(source)
            if belongs(stem, relative):
                target = root / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)


def scenario_root(tmp_path: Path, stem: str, *, at_gate: bool = False) -> Path:
    """One scenario's files alone; ``at_gate``: as they were while its runner waited at
    the gate (scenario E's DOT, which the engine never writes, from the final state)."""
    root = tmp_path / f"{stem}{'-at-gate' if at_gate else ''}"
    root.mkdir()
    copy_scenario(AT_GATE if at_gate else WRITTEN, stem, root)
    dot = root / PIPELINES / f"{stem}.dot"
    if at_gate and not dot.exists():
        dot.parent.mkdir(parents=True, exist_ok=True)
        for name in (f"{stem}.dot", f"{stem}.dot.ops.jsonl"):
            if (WRITTEN / PIPELINES / name).exists():
                shutil.copy2(WRITTEN / PIPELINES / name, dot.parent / name)
    make_writable(root)
    return root


def fixture_run(stem: str, source: Path = WRITTEN) -> Path:
    """The scenario's engine run directory in ``source``."""
    (found,) = (source / RUNS).glob(f"{stem}-run-*")
    return found


RUNNER_SCRIPT = """\
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("ready", flush=True)
while True:
    time.sleep(0.2)
"""


@contextmanager
def live_runner(root: Path, stem: str, kind: str = "pipeline_runner") -> Iterator[int]:
    """A stand-in for one of the harness's runners while the block runs, started from
    ``root`` and found by its command line as the real one is: ``pipeline_runner.py
    --dot-file <dot>``, or (``kind="engine"``) ``cobuilder pipeline run <dot>``; killed
    (and reaped) after. Yields its pid."""
    dot = str(PIPELINES / f"{stem}.dot")
    name, args = ("cobuilder", ["pipeline", "run", dot])
    if kind == "pipeline_runner":
        name, args = ("pipeline_runner.py", ["--dot-file", dot])
    script = root.parent / "bin" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(RUNNER_SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script), *args], cwd=root, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        yield process.pid
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
