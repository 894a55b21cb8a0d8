"""The fleet console's panes: the project console's own, each row with its source first
(``Pane`` with ``Sources``), drawing the fleet's ``SourcesModel``; what the operator
decides or asks of a row goes to the row's source. The Agents and Problems panes are the
project console's as they are (they draw the model's ``FleetRecords``); the others here
add the feeding (``follow``: the keys a batch moved) and the routing. The Sources pane is
the fleet console's own: one row per source, its state and its figures.

The filter takes ``source:NAME`` (or a bare source name) to keep one source's rows; the
rest of the text is matched against the row as everywhere in the console."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from textual.binding import Binding
from textual.message import Message

from runeconsole.services.claude.permissions.service import PermissionRequest
from runeconsole.services.merge_queue import QueueEntry
from runeconsole.services.pipelines.agents import NodeWork, work_by_node
from runeconsole.services.pipelines.record import Gate, Pipeline
from runeconsole.services.sources.decode import SourceState
from runeconsole.services.sources.fleet import FleetFeed
from runeconsole.services.sources.model import Keyed, Moved, SourcesModel
from runeconsole.services.suspension import ContextRecord
from runeconsole.services.worker_questions import Answer, Question
from runeconsole.tui.fleet_console.rows import SOURCE_COLUMNS, source_row
from runeconsole.tui.modals.permission_modal import Decide as DecidePermission
from runeconsole.tui.modals.question_modal import Decide as DecideQuestion
from runeconsole.tui.panes.merge_queue_rows import COLUMNS as QUEUE_COLUMNS
from runeconsole.tui.panes.merge_queue_rows import age_of, row_values, search_fields
from runeconsole.tui.panes.pane import MERGE_QUEUE, Columns, Pane, Sources, matches
from runeconsole.tui.panes.permissions_pane import PermissionsPane
from runeconsole.tui.panes.pipelines_pane import HELP_KEYS as PIPELINE_KEYS
from runeconsole.tui.panes.pipelines_pane import PipelinesPane
from runeconsole.tui.panes.questions_pane import QuestionsPane
from runeconsole.tui.panes.suspended_pane import SuspendedPane

SOURCES = "sources"
R = TypeVar("R")


class Act(Message):
    """An action on a row (``process``, ``resume``), for the app to route to its source."""

    def __init__(self, action: str, source: str, key: str) -> None:
        super().__init__()
        self.action = action
        self.source = source
        self.key = key


def follow(pane: Pane[R], keyed: Keyed[R], moved: Moved) -> None:
    """A batch's rows of one kind, into ``pane``: the changed drawn again, the removed
    dropped."""
    for key in moved.removed:
        pane.drop(key)
    for key in moved.changed:
        record = keyed.get(key)
        if record is None:
            pane.drop(key)
        else:
            pane.put(key, record)
    pane.finish()


class SourcesPane(Pane[SourceState]):
    PANE_ID, TITLE = SOURCES, "Sources"
    COLUMNS = SOURCE_COLUMNS
    BINDINGS = [Binding("n", "new_task", "New task")]
    HELP_KEYS = (
        ("n", "a new task on the selected source (the form of n in the Agents pane)"),
        ("STATE", "● green up, yellow connecting, red down (the reason is on the row)"),
        ("/ NAME", "in any pane, a source's name (or source:NAME) keeps its rows only"),
    )

    def __init__(self, model: SourcesModel, names: Sources, **kwargs: Any) -> None:
        self.model, self.names = model, names  # before the table is made: its columns
        super().__init__(**kwargs)

    def columns(self) -> Columns:
        """The source column as wide as the longest name: whole names, never cut."""
        return tuple(self.names.column if c[0] == "source" else c for c in SOURCE_COLUMNS)

    def passes(self, key: str, record: SourceState) -> bool:
        source, rest = self.names.split(self.filter_text)
        return (source is None or source == key) and matches(rest, *self.search_fields(key, record))

    def on_mount(self) -> None:
        self.show_sources(set(self.model.names))

    def cells(self, key: str, record: SourceState) -> tuple[object, ...]:
        return source_row(record, self.model.counts(key))

    def search_fields(self, key: str, record: SourceState) -> tuple[object, ...]:
        return (key, record.host, record.root, record.state, record.reason)

    def show_sources(self, names: set[str]) -> None:
        """The sources' rows, in the fleet file's order, each drawn again (its counts move
        with its agents)."""
        for name in self.model.names:
            self.put(name, self.model.state(name))
        self.finish()

    def action_new_task(self) -> None:
        source = self.table.cursor_key()
        if source is not None:
            self.post_message(Act("new_task", source, ""))


class FleetQuestionsPane(QuestionsPane):
    HELP_KEYS = (
        ("enter / a", "answer the selected question; the answer is sent to its source"),
        *QuestionsPane.HELP_KEYS[1:],
    )

    def __init__(self, model: SourcesModel, feed: FleetFeed, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model, self.feed = model, feed

    def answering(self, key: str) -> tuple[DecideQuestion, Callable[[Question], bool]]:
        source = self.source_of(key)

        def decide(question: Question, options: list[str] | None, text: str | None) -> Answer:
            actions = self.feed.actions(source)
            given = actions.answer(question.id, options=options or (), text=text)
            return Answer.from_json(given if isinstance(given, dict) else {}, question.answer_path)

        def settled(question: Question) -> bool:
            fresh = self.model.questions.get(self.feed.key(source, question.id))
            return fresh is None or not fresh.open

        return decide, settled

    def follow(self, moved: Moved) -> None:
        """A batch's questions; one answered or gone elsewhere closes its window."""
        for key in moved.removed:
            gone = self.records.get(key)
            if gone is not None:
                self.tell_modal(gone, None, "Answered or withdrawn on its source")
        follow(self, self.model.questions, moved)


class FleetPermissionsPane(PermissionsPane):
    HELP_KEYS = (
        ("enter / a", "decide the selected request; the decision is sent to its source"),
        *PermissionsPane.HELP_KEYS[1:],
    )

    def __init__(self, model: SourcesModel, feed: FleetFeed, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model, self.feed = model, feed

    def deciding(self, key: str) -> DecidePermission:
        source = self.sources.of(key) if self.sources is not None else ""

        def decide(request: PermissionRequest, verdict: Any) -> PermissionRequest:
            decided = self.feed.actions(source).decide(request.id, verdict)
            return PermissionRequest.from_json(decided if isinstance(decided, dict) else {})

        return decide

    def follow(self, moved: Moved) -> None:
        """A batch's requests; one decided elsewhere closes its window, saying how."""
        follow(self, self.model.permissions, moved)
        modal, key = self.modal, self.modal_key
        fresh = self.model.permissions.get(key) if modal is not None and key else None
        if modal is not None and fresh is not None and not fresh.open:
            modal.decided_elsewhere(fresh)


class FleetSuspendedPane(SuspendedPane):
    HELP_KEYS = (
        ("VERDICT", "each context file's integrity, as its source judged it"),
        ("s", "resume the selected task on its source (asks first; shows and copies it)"),
    )

    def resume_record(self, key: str, record: ContextRecord) -> None:
        source = self.sources.of(key) if self.sources is not None else ""
        self.post_message(Act("resume", source, key))


class FleetMergeQueuePane(Pane[QueueEntry]):
    PANE_ID, TITLE = MERGE_QUEUE, "Merge queue"
    SHORT_TITLE = "Queue"
    ENTER = "review"
    COLUMNS = QUEUE_COLUMNS
    MOVING = frozenset({"age"})
    BINDINGS = [
        Binding("p", "process", "Process"),
        Binding("d", "review", "Review"),
    ]
    HELP_KEYS = (
        ("p", "process the selected entry's queue on its source (confirmed)"),
        ("enter / d", "review the changes of the selected entry's agent, on its source"),
    )

    def cells(self, key: str, record: QueueEntry) -> tuple[object, ...]:
        return row_values(record, None, self.now())

    def search_fields(self, key: str, record: QueueEntry) -> tuple[str, ...]:
        return search_fields(record)

    def moving(self, key: str, record: QueueEntry) -> dict[str, object]:
        return {"age": age_of(record, self.now())}

    def order(self, key: str, record: QueueEntry) -> tuple[object, ...]:
        """Each source's queue in its order."""
        return (self.sources.of(key) if self.sources else "", *record.sort_key())

    def action_process(self) -> None:
        chosen = self.selected()
        if chosen is not None:
            source = self.sources.of(chosen[0]) if self.sources is not None else ""
            self.post_message(Act("process", source, chosen[0]))

    def action_review(self) -> None:
        """The review of the entry's agent (its identity), on its source."""
        chosen = self.selected()
        if chosen is None:
            return
        key, entry = chosen
        if not entry.identity:
            self.notify("this entry names no agent to review", severity="warning")
            return
        source = self.sources.of(key) if self.sources is not None else ""
        self.post_message(Act("review", source, entry.identity))


class FleetPipelinesPane(PipelinesPane):
    """Every source's pipelines, as their streams carry them: enter opens one's screen
    from the record (its timeline is read on its own machine), a gate's answer is sent
    to the pipeline's source (``runeconsole gate approve|reject`` there)."""

    HELP_KEYS = (
        ("enter", "the pipeline's nodes in dependency order, their agents (on its source)"),
        ("g", "answer the gate that waits: the answer is sent to the pipeline's source"),
        *PIPELINE_KEYS[2:],
    )

    SHORT_TITLE = "Plans"  # the fleet's eight tabs share 80 columns with Sources

    def __init__(self, model: SourcesModel, feed: FleetFeed, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model, self.feed = model, feed

    def work_of(self, pipeline: Pipeline) -> dict[str, NodeWork]:
        """The agents and queue entries of the pipeline's own source, by node."""
        if pipeline.plan is None:
            return {}
        key = next((k for k, p in self.records.items() if p.path == pipeline.path), "")
        source, of = self.source_of(key), self.feed.source_of
        agents = [r for k, r in self.model.agents.records.items() if of(k) == source]
        queue = self.model.queue
        entries = [e for k, e in queue.records.items() if queue.source(k) == source]
        return work_by_node([n.node_id for n in pipeline.plan.nodes], agents, entries)

    def answer_gate(self, key: str, gate: Gate, answer: str, reason: str) -> str:
        source = self.source_of(key) or ""
        given = self.feed.actions(source).gate(gate.stem, gate.node_id, answer, reason)
        note = given.get("note") if isinstance(given, dict) else None
        return f"{note} (on {source})" if note else f"sent to {source}"

    def follow(self, moved: Moved) -> None:
        """A batch's pipelines: drawn again, their gates told, a screen open on one
        redrawn."""
        keys = set(moved.changed) | set(moved.removed)
        self.keep({key: self.model.pipelines.get(key) for key in keys})
