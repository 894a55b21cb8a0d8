"""Signals: harness naming, never lost, never overwritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.support.cli import cli_env


def test_signal_file_name_and_body(project: Path, clock: ManualClock) -> None:
    signals = Signals(Project(project, clock))
    sent = signals.send("AGENT_CRASHED", "runeconsole", "orchestrator-auth", {"key": "x"})
    stamp, source, target, kind = sent.path.name[: -len(".json")].split("-")
    assert (source, target, kind) == ("runeconsole", "orchestrator_auth", "AGENT_CRASHED")
    assert stamp.startswith("20260226T120000")
    body = json.loads(sent.path.read_text())
    assert body == {
        "source": "runeconsole",
        "target": "orchestrator-auth",
        "signal_type": "AGENT_CRASHED",
        "timestamp": "20260226T120000Z",  # the harness's own form
        "payload": {"key": "x"},
    }


@pytest.mark.e2e  # 10,000 writes from real processes
def test_ten_thousand_signals_in_one_second_are_all_kept(project: Path) -> None:
    signals = Signals(Project(project, ManualClock()))  # the clock never moves: one instant
    for n in range(10_000):
        signals.send("GUIDANCE", "guardian", "runner", {"n": n})
    files = os.listdir(signals.directory)
    assert len(files) == 10_000
    seen = {json.loads((signals.directory / f).read_text())["payload"]["n"] for f in files}
    assert seen == set(range(10_000))


@pytest.mark.e2e
def test_concurrent_processes_never_overwrite(project: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from runeconsole.adapters.clock import ManualClock;"
        "from runeconsole.services.signals import Signals;"
        "from runeconsole.services.project import Project;"
        "s = Signals(Project(Path(sys.argv[1]), ManualClock()));"
        "[s.send('MERGE_READY', 'runner', 'guardian', {'p': sys.argv[2], 'n': n})"
        " for n in range(300)]"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(project), str(p)], env=cli_env())
        for p in range(4)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert len(Signals(Project(project)).pending(signal_type="MERGE_READY")) == 1200


def test_pending_filters_and_consume_moves_without_replacing(
    project: Path, clock: ManualClock
) -> None:
    signals = Signals(Project(project, clock))
    first = signals.send("MERGE_READY", "runner", "guardian")
    signals.send("GUIDANCE", "guardian", "runner")
    assert [s.path for s in signals.pending(signal_type="MERGE_READY")] == [first.path]
    assert [s.signal_type for s in signals.pending(target="runner")] == ["GUIDANCE"]
    moved = signals.consume(first)
    assert moved.parent.name == "processed" and not first.path.exists()
    # A processed file of the same name already exists: it is kept, ours gets a new name.
    (signals.directory / first.path.name).write_bytes(b"{}")
    again = signals.consume(signals.read(signals.directory / first.path.name))
    assert again != moved and json.loads(moved.read_text())["signal_type"] == "MERGE_READY"
    with pytest.raises(RuneError, match="already consumed"):
        signals.consume(first)


def test_unreadable_signal_is_reported_not_raised(project: Path, clock: ManualClock) -> None:
    signals = Signals(Project(project, clock))
    signals.directory.mkdir(parents=True)
    (signals.directory / "20260101T000000Z-a-b-GUIDANCE.json").write_text("{nope")
    [bad] = signals.pending()
    assert bad.error and "not valid JSON" in bad.error


@pytest.mark.parametrize(
    ("kind", "source", "target"),
    [("lower", "a", "b"), ("OK", "../x", "b"), ("OK", "a", "b/c"), ("OK", "", "b")],
)
def test_bad_signal_names_are_refused(project: Path, kind: str, source: str, target: str) -> None:
    with pytest.raises(InvalidInput):
        Signals(Project(project)).send(kind, source, target)
    assert not Signals(Project(project)).directory.exists()
