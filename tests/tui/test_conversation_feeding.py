"""The console indexes a conversation as its agent's hooks say a turn was written (a Stop,
a tool's result): only what was appended is read, and a heartbeat feeds nothing."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from runeconsole.adapters.clock import ManualClock
from runeconsole.services.conversations.feeding import FeedDue
from runeconsole.services.conversations.index import ConversationIndex
from runeconsole.services.liveness import AgentRecord
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.tui.console.app import FEED_SECONDS, create_app
from runeconsole.tui.conversations.searching import IndexSearch
from tests.support.polling import until
from tests.tui.conversation_fixtures import KEY, append_text, conversation_agent


def record(key: str, event: str | None, at: str) -> AgentRecord:
    claude = {"last_event": event, "last_event_at": at} if event else {}
    return AgentRecord(key, "", {"claude": claude, "last_heartbeat": at})


def test_an_agent_is_due_once_for_each_event_that_wrote_a_turn() -> None:
    due = FeedDue()
    due.saw([record("a", "Stop", "t1"), record("b", "PreToolUse", "t1"), record("c", None, "t1")])
    assert due.take() == ["a"] and due.take() == []
    due.saw([record("a", "Stop", "t1")])  # the same event again (a heartbeat moved the file)
    assert due.take() == []
    due.saw([record("a", "PostToolUse", "t2"), None])
    assert due.take() == ["a"]


async def test_a_stop_reported_by_the_hooks_gets_the_new_turn_indexed(
    project: Path, tmp_path: Path
) -> None:
    transcript = conversation_agent(project)
    app = create_app(project, clock=ManualClock(), watch=True, monitor=False, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: KEY in app.fleet.records)
        append_text(transcript, "the flamingo migration is done", 30.0)
        index = ConversationIndex(Project(project))
        await pilot.pause(FEED_SECONDS + 0.5)  # no hook event yet: nothing indexed
        assert not index.search("flamingo")
        claude = {**app.fleet.records[KEY].fields["claude"], "last_event": "Stop"}
        claude["last_event_at"] = "2026-11-29T06:00:00Z"
        Registry(Project(project)).update(KEY, {"claude": claude})

        def found() -> bool:
            return bool(index.search("flamingo"))

        await until(pilot, found, timeout=20)
        (hit,) = index.search("flamingo")
        assert hit.key == KEY and hit.speaker == "assistant"


def test_closing_the_index_while_a_feed_runs_waits_for_it_and_feeds_nothing_after(
    project: Path,
) -> None:
    """The console closing (the index closed on the UI thread) while its worker feeds:
    a connection closed under a running statement would crash the whole process."""
    transcript = conversation_agent(project)
    search = IndexSearch(Project(project))
    fed: list[int] = []
    errors: list[BaseException] = []

    def feeding() -> None:
        try:
            for n in range(60):
                append_text(transcript, f"turn number {n} of the feed", 40.0 + n)
                fed.append(search.feed([KEY]))
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=feeding)
    worker.start()
    while len(fed) < 5 and worker.is_alive():
        time.sleep(0.005)
    search.close()
    worker.join(timeout=30)
    assert not errors and not worker.is_alive()
    assert fed[:5] == [t for t in fed[:5] if t > 0] and fed[-1] == 0  # none after the close
