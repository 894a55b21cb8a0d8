"""Pipelines across a fleet: the event stream's ``pipeline`` rows read back as the
records the project console holds (a DOT that cannot be read stays a row with its
reason), a change re-reads only the pipeline it names, and a gate on a host is listed
and answered over the source's SSH connection (a real private sshd) as on this machine,
once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runeconsole.adapters.ssh import SshTransport
from runeconsole.core.errors import RuneError
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.events import Event
from runeconsole.services.events.sections import PIPELINE, PipelineSection
from runeconsole.services.pipelines.record import Pipeline
from runeconsole.services.project import Project
from runeconsole.services.sources import UP, LocalActions, RemoteActions, RemoteSource
from runeconsole.services.sources.decode import decode
from runeconsole.services.sources.remote import wait_for
from tests.support.pipelines import FIXTURES, STEMS, whole_root
from tests.support.sshd import Sshd


def harness_root(tmp_path: Path, which: str = "harness-written-at-gate") -> Path:
    return whole_root(tmp_path, FIXTURES / which, name=which)


def test_every_pipeline_row_reads_back_as_the_record_this_machine_holds(tmp_path: Path) -> None:
    root = harness_root(tmp_path, "harness-written")
    section = PipelineSection(Project(root))
    rows = section.read()
    assert sorted(key for kind, key in rows if kind == PIPELINE) == STEMS
    for (_, key), data in rows.items():
        here = section.pipelines.get(key)
        there = Pipeline.from_json(data)
        assert (there.state, there.counts(), there.findings) == (
            here.state,
            here.counts(),
            here.findings,
        )
        assert [g.key for g in there.gates] == [g.key for g in here.gates]
        assert there.plan is not None and here.plan is not None
        assert [n.node_id for n in there.plan.nodes] == [n.node_id for n in here.plan.nodes]


def test_a_dot_cut_short_is_a_row_with_its_reason_and_its_last_good_nodes(tmp_path: Path) -> None:
    root = harness_root(tmp_path)
    section = PipelineSection(Project(root))
    section.read()
    dot = root / ".pipelines" / "pipelines" / "gate-demo.dot"
    dot.write_text(dot.read_text()[:400])
    rows, removed = section.read_paths({dot})
    assert not removed and list(rows) == [(PIPELINE, "gate-demo")]
    (row,) = decode(
        [
            {
                "event": "upsert",
                "kind": PIPELINE,
                "key": "gate-demo",
                "data": rows[(PIPELINE, "gate-demo")],
            }
        ]
    )
    record = row.record
    assert isinstance(record, Pipeline)
    assert record.state == "unreadable" and "cut short" in (record.error or "")
    assert record.plan is not None and len(record.plan.nodes) == 5 and not record.is_complete()


def test_a_row_that_is_not_a_pipeline_is_an_unreadable_one_not_a_crash() -> None:
    (row,) = decode([{"event": "upsert", "kind": PIPELINE, "key": "x", "data": {"nodes": [{}]}}])
    assert isinstance(row.record, Pipeline) and row.record.error


@pytest.fixture
def host(sshd: Sshd) -> Iterator[Callable[[Path], tuple[RemoteSource, list[Event]]]]:
    started: list[RemoteSource] = []

    def follow(root: Path) -> tuple[RemoteSource, list[Event]]:
        heard: list[Event] = []
        lock = threading.Lock()

        def listen(_: RemoteSource, events: list[Event], reset: bool) -> None:
            with lock:
                heard.extend(events)

        spec = SourceSpec(
            "alpha", str(root), "alpha", tuple(sshd.remote_command()), tuple(sshd.ssh_prefix)
        )
        transport = SshTransport("alpha", sshd.ssh_prefix, sockets=sshd.sockets, persist=5)
        source = RemoteSource(spec, listen, transport=transport, heartbeat=0.5)
        source.start()
        started.append(source)
        assert wait_for(lambda: source.status.state == UP, 30), source.status
        return source, heard

    yield follow
    for source in started:
        source.stop()


def test_a_gate_on_a_host_is_listed_and_answered_over_ssh_once(
    host: Callable[[Path], tuple[RemoteSource, list[Event]]], tmp_path: Path
) -> None:
    there = harness_root(tmp_path)
    source, heard = host(there)

    def gate_rows() -> list[Pipeline]:
        rows = decode([e for e in list(heard) if e.get("kind") == PIPELINE])
        return [r.record for r in rows if isinstance(r.record, Pipeline) and r.record.gates]

    assert wait_for(lambda: bool(gate_rows()), 30)
    assert [g.key for g in gate_rows()[-1].gates] == ["gate-demo/review"]

    report = RemoteActions(source).gate("gate-demo", "review", "approve")
    assert report["answer"] == "approve" and report["how"] == "transition"
    assert 'status="validated"' in (there / ".pipelines/pipelines/gate-demo.dot").read_text()
    with pytest.raises(RuneError):
        RemoteActions(source).gate("gate-demo", "review", "approve")
    assert wait_for(
        lambda: any(
            isinstance(r.record, Pipeline) and not r.record.gates and r.record.stem == "gate-demo"
            for r in decode([e for e in list(heard) if e.get("kind") == PIPELINE])[-1:]
        ),
        30,
    )


def test_on_this_machine_the_same_action_answers_in_process(tmp_path: Path) -> None:
    root = harness_root(tmp_path)
    report = LocalActions(Project(root)).gate("gate-demo", "review", "reject", "the graph is wrong")
    assert report["answer"] == "reject" and report["reworked"] == ["validate_graph"]
