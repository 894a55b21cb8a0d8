"""The merged stream decoded at the edge: each row back into the record its source read
(the one row function per kind then draws both consoles), a newer source's fields kept,
an older source's rows read, a hostile row shown as unreadable; and the fleet console's
model of them, counted per source as rows arrive and go."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.claude_scene import permission_request, relay_call
from runeconsole.demo.suspended import write_context
from runeconsole.services.claude.permissions.service import PermissionRequest, Permissions
from runeconsole.services.claude.questions import answers
from runeconsole.services.events.sections import Rows, sections_of
from runeconsole.services.liveness import AgentRecord
from runeconsole.services.merge_queue import QueueEntry
from runeconsole.services.project import Project
from runeconsole.services.sources.decode import Row, decode
from runeconsole.services.sources.model import SourcesModel
from runeconsole.services.supervision.problems import judge_with
from runeconsole.services.suspension import ContextRecord, Suspension
from runeconsole.services.worker_questions import Question, Questions
from tests.support.fleet import project_root
from tests.support.questions import ask


def stream(root: Path, clock: ManualClock, source: str = "one") -> list[dict[str, Any]]:
    """Every row of ``root`` as the merged stream sends it."""
    rows: Rows = {}
    for section in sections_of(Project(root, clock)):
        rows.update(section.read())
    return [
        {"event": "upsert", "kind": kind, "key": f"{source}/{key}", "source": source, "data": data}
        for (kind, key), data in rows.items()
    ]


def decoded(rows: list[Row], kind: type) -> dict[str, Any]:
    return {row.key: row.record for row in rows if isinstance(row.record, kind)}


def test_every_kind_comes_back_as_the_record_its_source_read(
    tmp_path: Path, clock: ManualClock
) -> None:
    root = project_root(tmp_path, "one", "a")
    relay_call(Project(root, clock).paths, clock.now())
    permission_request(Project(root, clock).paths, clock.now())
    ask(root, "task-9", "Ship it?")
    write_context(root, "7")
    rows = decode(stream(root, clock))

    questions = {q.id: q for q in Questions(Project(root, clock)).list()}
    for key, question in decoded(rows, Question).items():
        here = questions[key.removeprefix("one/")]
        assert (question.id, question.text, question.options) == (here.id, here.text, here.options)
        assert (question.multi_select, question.asked, question.deadline) == (
            here.multi_select,
            here.asked,
            here.deadline,
        )
        assert answers.is_relay(question) == answers.is_relay(here)
        assert answers.expires_in(question, clock.now()) == answers.expires_in(here, clock.now())
    relayed = [q for q in decoded(rows, Question).values() if answers.is_relay(q)]
    assert len(answers.call_of(relayed[0], relayed)) == 2  # the call's two questions, together
    assert any(q.multi_select for q in relayed)

    requests = {r.id: r for r in Permissions(Project(root, clock)).shown()}
    for key, request in decoded(rows, PermissionRequest).items():
        here = requests[key.removeprefix("one/")]
        assert (request.state, request.outcome, request.subject, request.expires) == (
            here.state,
            here.outcome,
            here.subject,
            here.expires,
        )
        assert request.fields.get("description") == here.fields.get("description")

    [context] = decoded(rows, ContextRecord).values()
    [here] = Suspension(Project(root, clock)).list()
    assert (context.verdict, context.task_id, context.text("worker"), context.detail) == (
        here.verdict,
        here.task_id,
        here.text("worker"),
        here.detail,
    )
    assert context.age_at(clock.now()) == here.age_at(clock.now())
    [agent] = decoded(rows, AgentRecord).values()
    assert agent.key == "one/worker-a" and agent.get("role") == "worker"


def test_a_newer_source_s_fields_flow_through_and_an_older_source_s_rows_are_read() -> None:
    newer = {"key": "a", "liveness": "green", "status": "active", "cost_usd": 1.25}
    older_question = {
        "id": "rune-work-1/task-1.q1",
        "state": "pending",
        "task_id": "task-1",
        "seq": 1,
        "signal_dir": "rune-work-1",
        "question": "Which parser?",
        "options": ["A: lark", "B: regex"],
        "urgency": "non-blocking",
        "asked_by": "runeconsole",
    }
    older_queue = {"entry_id": "e1", "branch": "feat/x", "status": "pending", "position": 1}
    rows = decode(
        [
            {"event": "upsert", "kind": "agent", "key": "a", "source": "s", "data": newer},
            {
                "event": "upsert",
                "kind": "question",
                "key": "q",
                "source": "s",
                "data": older_question,
            },
            {"event": "upsert", "kind": "queue", "key": "e1", "source": "s", "data": older_queue},
            {"event": "upsert", "kind": "telepathy", "key": "t", "source": "s", "data": {}},
        ]
    )
    agent, question, entry = (row.record for row in rows)
    assert isinstance(agent, AgentRecord) and agent.get("cost_usd") == 1.25
    assert isinstance(question, Question) and question.id == "rune-work-1/task-1.q1"
    assert [o.key for o in question.options] == ["A", "B"] and not question.blocking
    assert question.asked_here
    assert isinstance(entry, QueueEntry) and (entry.position, entry.branch) == (1, "feat/x")
    assert len(rows) == 3  # a kind this version does not know is left out


def test_a_row_that_cannot_be_read_as_its_kind_is_shown_unreadable_with_the_reason() -> None:
    rows = decode(
        [
            {"event": "upsert", "kind": "question", "key": "s/q", "source": "s", "data": [1]},
            {"event": "upsert", "kind": "agent", "key": "s/a", "source": "s", "data": "x"},
            {"event": "upsert", "kind": 7, "key": "s/b", "source": "s", "data": {}},
        ]
    )
    question, agent = (row.record for row in rows)
    assert isinstance(question, Question) and "not an object" in str(question.error)
    assert isinstance(agent, AgentRecord) and "not an object" in str(agent.error)


def test_the_sources_model_counts_each_source_s_rows_as_they_arrive_and_go(
    tmp_path: Path, clock: ManualClock
) -> None:
    one, two = project_root(tmp_path, "one", "a", "b"), project_root(tmp_path, "two", "c")
    ask(two, "task-1", "Which parser?")
    permission_request(Project(two, clock).paths, clock.now())
    model = SourcesModel(["one", "two"], clock, judge=judge_with(None))
    batch = model.apply(decode(stream(one, clock, "one") + stream(two, clock, "two")))
    assert batch.sources == {"one", "two"}
    colours = ("green", "yellow", "red", "grey")
    assert sum(model.counts("one")[c] for c in colours) == 2
    assert sum(model.counts("two")[c] for c in colours) == 1
    assert model.counts("two")["questions"] == 1 and model.counts("one")["questions"] == 0
    assert model.counts("two")["permissions"] == 1
    asked = next(iter(model.questions.records))
    gone = model.apply(
        decode([{"event": "remove", "kind": "question", "key": asked, "source": "two"}])
    )
    assert gone.of("question").removed == {asked} and model.counts("two")["questions"] == 0
    crashed = {"key": "one/worker-a", "status": "crashed", "liveness": "red"}
    change = model.apply(
        decode(
            [
                {
                    "event": "upsert",
                    "kind": "agent",
                    "key": "one/worker-a",
                    "source": "one",
                    "data": crashed,
                }
            ]
        )
    )
    assert change.agents.problems == {"one/worker-a"}
    assert model.counts("one")["problems"] == 1 and model.counts("one")["red"] == 1
