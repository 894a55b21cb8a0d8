"""A DOT rewritten in place while it is read, as the harness CLI rewrites it (open for
writing, which empties it, then the text in two writes): the reader sees it empty or
cut at times, and must never take it for a finished pipeline (the harness's own runner
did, and exited), never raise, and keep its last good plan while it cannot read it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.project import Project
from tests.support.pipelines import PIPELINES, scenario_root

REWRITER = r"""
import os, sys, time
path, flag = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
half = len(data) // 2
print("ready", flush=True)
while not os.path.exists(flag):
    with open(path, "wb") as out:  # truncates: the harness CLI's in-place rewrite
        out.write(data[:half])
        out.flush()
        time.sleep(0.002)
        out.write(data[half:])
    time.sleep(0.001)
"""

READ_SECONDS = 3.0


def test_a_dot_rewritten_in_place_while_read_is_never_complete_and_keeps_its_plan(
    tmp_path: Path,
) -> None:
    root = scenario_root(tmp_path, "gate-demo")  # decide and finalize still pending
    dot = root / PIPELINES / "gate-demo.dot"
    whole = dot.read_bytes()
    store = Pipelines(Project(root))
    (first,) = store.list()
    assert first.state == "pending" and first.plan is not None
    flag = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", REWRITER, str(dot), str(flag)],
        stdout=subprocess.PIPE,
        text=True,
    )
    states: dict[str, int] = {}
    reads = 0
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + READ_SECONDS
        while time.monotonic() < deadline:
            (pipeline,) = store.list()  # never raises
            reads += 1
            states[pipeline.state] = states.get(pipeline.state, 0) + 1
            assert not pipeline.is_complete()
            assert pipeline.plan is not None and len(pipeline.plan.nodes) == 5
            assert pipeline.to_json()["counts"]["pending"] == 2
    finally:
        flag.touch()
        writer.wait(timeout=30)
        if writer.stdout is not None:
            writer.stdout.close()
    assert "complete" not in states, states
    assert states.get("unreadable", 0) > 0, (reads, states)  # it was seen half-written
    assert states.get("pending", 0) > 0, (reads, states)  # and whole, between rewrites
    assert set(states) <= {"pending", "unreadable"}, states
    assert dot.read_bytes() == whole
    (after,) = store.list()
    assert (after.state, after.error) == ("pending", None)
