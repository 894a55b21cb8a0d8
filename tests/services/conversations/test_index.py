"""The one search over every conversation: words, phrases and prefixes found in prompts,
texts, tool calls and their output; every filter; newest first with the words marked; an
index fed only the bytes appended, read again when its file is replaced, rebuilt with a
message when its database is not to be trusted; hostile queries never an FTS5 error; two
processes feeding at once never index a turn twice."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.conversations import index_schema
from runeconsole.services.conversations.index import ConversationIndex
from runeconsole.services.conversations.query import MARK_CLOSE, MARK_OPEN, Hit, fts_expression
from runeconsole.services.project import Project
from runeconsole.services.retention import Retention
from tests.support.cli import cli_env
from tests.support.index_transcripts import BASE, Session, identity
from tests.support.paths import REPO

FIXTURE = REPO / "tests" / "fixtures" / "claude_transcripts" / "-tmp-tx-project"


@pytest.fixture
def transcripts(tmp_path: Path) -> Path:
    return tmp_path / "claude" / "projects" / "-tmp-project"


@pytest.fixture
def index(project: Path) -> Iterator[ConversationIndex]:
    made = ConversationIndex(Project(project))
    yield made
    made.close()


def two_agents(project: Path, transcripts: Path) -> tuple[Session, Session]:
    """worker-a ran the migration (minutes 1-3); reviewer-b read it later (minutes 10-12)."""
    a, b = Session(transcripts), Session(transcripts)
    identity(project, "worker-a", "worker", a)
    identity(project, "reviewer-b", "reviewer", b)
    a.write(a.noise(0), a.prompt("Please run the database migration", 1))
    a.tool("Bash", {"command": "alembic upgrade head"}, "ERROR: relation users already exists", 2)
    a.write(a.text("The migration failed: the users table already exists.", 3))
    b.write(b.prompt("Review the migrations folder", 10))
    b.tool(
        "Read", {"file_path": "/tmp/project/migrations/0042_users.py"}, "def upgrade(): pass", 11
    )
    b.write(b.text("Migrations look fine to me; nothing about users.", 12))
    return a, b


def keys(hits: list[Hit]) -> list[tuple[str, str, str]]:
    return [(h.key, h.speaker, h.kind) for h in hits]


def test_a_word_is_found_in_a_prompt_a_text_and_a_tool_s_output(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])

    assert keys(index.search("alembic")) == [("worker-a", "assistant", "tool")]
    assert keys(index.search("exists")) == [
        ("worker-a", "assistant", "text"),
        ("worker-a", "assistant", "tool"),
    ]
    assert keys(index.search("database")) == [("worker-a", "user", "prompt")]
    assert index.search("zebra") == []  # a record the console does not show is not indexed


def test_all_words_must_appear_and_a_phrase_keeps_its_order(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])

    assert keys(index.search("users table")) == [("worker-a", "assistant", "text")]
    assert len(index.search('"users table"')) == 1
    assert index.search('"table users"') == []
    assert keys(index.search("migration OR review")) == [
        ("reviewer-b", "user", "prompt"),
        ("worker-a", "assistant", "text"),
        ("worker-a", "user", "prompt"),
    ]
    assert keys(index.search("migration -failed")) == [("worker-a", "user", "prompt")]


def test_a_prefix_finds_every_word_it_begins(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])

    found = index.search("migra*")
    assert {h.key for h in found} == {"worker-a", "reviewer-b"}
    assert len(found) == 5  # migration ×2, migrations ×3 (a prompt, a path, a text)


def test_every_filter_narrows_the_hits(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])

    assert {h.key for h in index.search("users", agent="reviewer-b")} == {"reviewer-b"}
    assert {h.key for h in index.search("users", role="worker")} == {"worker-a"}
    assert {h.tool for h in index.search("users", tool="bash")} == {"Bash"}
    assert {h.speaker for h in index.search("migra*", speaker="user")} == {"user"}
    late = index.search("users", since=BASE + timedelta(minutes=5))
    assert {h.key for h in late} == {"reviewer-b"}
    assert len(index.search("users", limit=1)) == 1
    assert index.search("users", agent="nobody") == []


def test_hits_come_newest_first_with_where_their_turn_starts(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])

    hits = index.search("users")
    moments = [h.at for h in hits if h.at is not None]
    assert moments == sorted(moments, reverse=True) and len(hits) == 4
    assert hits[0].at == BASE + timedelta(minutes=12)
    for hit in hits:
        with open(hit.path, "rb") as stream:
            stream.seek(hit.offset)
            record = stream.readline()
        assert hit.uuid and hit.uuid.encode() in record
        assert hit.session_id in (a.id, b.id)


def test_the_words_found_are_marked_in_the_snippet(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])

    (hit,) = index.search("failed")
    assert f"{MARK_OPEN}failed{MARK_CLOSE}" in hit.snippet
    assert hit.marked() == "The migration [failed]: the users table already exists."
    assert ("failed", True) in hit.spans()
    as_json = hit.to_json()
    start, end = as_json["marks"][0]
    assert as_json["snippet"][start:end] == "failed"
    assert type(hit).from_json(as_json, "alpha").snippet == hit.snippet


def test_a_feed_reads_only_the_bytes_appended_since_the_last(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, _ = two_agents(project, transcripts)
    first = index.feed_report([a.path])
    assert first.bytes == a.path.stat().st_size and first.turns == 3

    appended = a.tool("Grep", {"pattern": "flamingo"}, "no matches", 4)
    again = index.feed_report([a.path])

    assert (again.bytes, again.turns) == (appended, 1)
    assert index.feed(a.path) == 0  # nothing new: nothing read
    assert keys(index.search("flamingo")) == [("worker-a", "assistant", "tool")]
    assert len(index.search("alembic")) == 1  # what was indexed before, once


def test_a_line_still_being_written_waits_for_its_end(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, _ = two_agents(project, transcripts)
    index.feed(a.path)
    whole = (a.text("the penguin arrived", 5) | {}).copy()
    from tests.support.index_transcripts import line

    data = line(whole)
    with open(a.path, "ab") as stream:
        stream.write(data[:20])
    assert index.feed(a.path) == 0
    with open(a.path, "ab") as stream:
        stream.write(data[20:])
    assert index.feed(a.path) == 1
    assert len(index.search("penguin")) == 1


def test_a_result_that_comes_after_its_call_s_feed_is_found_under_its_tool(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a = Session(transcripts)
    call, call_id = a.call("Bash", {"command": "make test"}, 1)
    a.write(call)
    index.feed(a.path)
    a.write(a.result(call_id, "42 passed, 1 walrus failed", 2))
    index.feed(a.path)

    assert [h.tool for h in index.search("walrus", tool="Bash")] == ["Bash"]


def test_a_replaced_or_shortened_file_is_read_again_from_its_start(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, _ = two_agents(project, transcripts)
    index.feed(a.path)

    replacement = a.path.with_suffix(".new")
    replacement.write_bytes(a.path.read_bytes().replace(b"alembic", b"flyway!"))
    os.replace(replacement, a.path)  # same size, another inode
    report = index.feed_report([a.path])
    assert report.reindexed == 1
    assert index.search("alembic") == [] and len(index.search("flyway")) == 1

    a.path.write_bytes(b"")  # cut to nothing, then a new conversation in place
    a.write(a.prompt("start over with cormorants", 20))
    assert index.feed_report([a.path]).reindexed == 1
    assert index.search("flyway") == [] and len(index.search("cormorants")) == 1


def test_bytes_rewritten_in_place_before_the_offset_read_again(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, _ = two_agents(project, transcripts)
    index.feed(a.path)
    data = a.path.read_bytes()
    with open(a.path, "r+b") as stream:  # same inode, same size, last line changed
        stream.write(data.replace(b"already exists.", b"already ostrich"))
    assert index.feed_report([a.path]).reindexed == 1
    assert len(index.search("ostrich")) == 1


def test_unreadable_lines_are_skipped_and_counted(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a = Session(transcripts)
    a.write(a.prompt("before the damage", 1))
    with open(a.path, "ab") as stream:
        stream.write(b'{"type":"user","message":\n')
        stream.write(b"\xff\xfe not json at all\n")
        stream.write(b"[1,2,3]\n")
    a.write(a.prompt("after the damage", 2))

    report = index.feed_report([a.path])
    assert report.skipped == 3
    assert len(index.search("damage")) == 2


def test_the_real_transcript_and_its_subagent_are_indexed(
    index: ConversationIndex, tmp_path: Path
) -> None:
    copied = tmp_path / "projects"
    subprocess.run(["cp", "-r", str(FIXTURE), str(copied)], check=True)
    session = next(copied.glob("*.jsonl"))

    report = index.feed_report([session])

    assert report.read == 2 and report.skipped == 0
    assert [h.tool for h in index.search("hello from bash")] == ["Bash"]
    (sub,) = index.search("looked", speaker="assistant")
    assert sub.depth == 0
    notified, said = index.search('"All good"')  # the notification, then the subagent's text
    assert (notified.speaker, notified.depth) == ("system", 0)
    assert said.depth == 1 and "subagents" in said.path


def test_the_agent_is_found_by_its_identity_even_after_it_was_replaced(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    history = project / ".claude" / "state" / "identities" / "history"
    history.mkdir()
    old = Session(transcripts)
    old.write(old.prompt("the predecessor spoke of herons", 0))
    (history / "worker-a-20260301T110000Z.json").write_text(
        json.dumps({"role": "worker", "name": "a", "claude": {"transcript_path": str(old.path)}})
    )
    stranger = Session(transcripts)
    stranger.write(stranger.prompt("herons from nowhere", 0))

    index.rescan([a.path, b.path, old.path, stranger.path])

    assert sorted(h.key for h in index.search("herons")) == ["", "worker-a"]
    assert {h.role for h in index.search("herons", agent="worker-a")} == {"worker"}


def test_feed_agent_feeds_the_transcript_its_identity_names(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    two_agents(project, transcripts)
    assert index.feed_agent("worker-a") == 3
    assert {h.key for h in index.search("migra*")} == {"worker-a"}
    assert index.feed_agent("nobody") == 0


def test_a_rescan_reads_only_what_changed_and_keeps_ended_sessions(
    index: ConversationIndex, project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])
    assert index.rescan([a.path, b.path]).read == 0

    b.write(b.text("one more kestrel", 13))
    again = index.rescan([a.path, b.path])
    assert (again.read, again.turns) == (1, 1)

    a.path.unlink()
    gone = index.rescan([b.path])
    assert gone.gone == 1
    assert len(index.search("alembic")) == 1  # an ended session stays searchable
    assert [p for p, _ in index.gone_sessions()] == [str(a.path)]
    assert index.drop_gone([str(a.path)]) == 1
    assert index.search("alembic") == []


@pytest.mark.parametrize(
    "garbage",
    [
        b"this is not a database at all, just words" * 100,
        b"SQLite format 3\x00" + b"\x07" * 4000,
    ],
)
def test_a_corrupt_database_is_rebuilt_with_a_message(
    project: Path, transcripts: Path, garbage: bytes
) -> None:
    a, b = two_agents(project, transcripts)
    database = project / ".claude" / "state" / "conversations.sqlite"
    database.parent.mkdir(parents=True, exist_ok=True)
    database.write_bytes(garbage)

    index = ConversationIndex(Project(project))
    report = index.rescan([a.path, b.path])

    assert any("not a usable conversation index" in m for m in report.messages)
    assert len(index.search("alembic")) == 1
    index.close()


def test_a_database_of_another_schema_is_not_trusted(project: Path, transcripts: Path) -> None:
    a, _ = two_agents(project, transcripts)
    database = project / ".claude" / "state" / "conversations.sqlite"
    database.parent.mkdir(parents=True, exist_ok=True)
    other = sqlite3.connect(database)
    other.execute("CREATE TABLE files (x)")
    other.execute("CREATE TABLE meta (name, value)")
    other.execute("INSERT INTO meta VALUES ('schema', '0')")
    other.commit()
    other.close()

    index = ConversationIndex(Project(project))
    assert index.feed(a.path) == 3
    assert any("not a usable conversation index" in m for m in index.messages)
    index.close()


def test_a_database_damaged_while_open_is_rebuilt_on_the_next_search(
    project: Path, transcripts: Path
) -> None:
    a, b = two_agents(project, transcripts)
    index = ConversationIndex(Project(project))
    index.rescan([a.path, b.path])
    index.close()
    database = project / ".claude" / "state" / "conversations.sqlite"
    data = bytearray(database.read_bytes())
    for at in range(4096, len(data), 512):  # every page but the first trampled
        data[at : at + 64] = b"\xee" * 64
    database.write_bytes(bytes(data))
    for name in ("conversations.sqlite-wal", "conversations.sqlite-shm"):
        (database.parent / name).unlink(missing_ok=True)

    again = ConversationIndex(Project(project))
    found = again.search("alembic")  # rebuilt empty, never an sqlite3 error
    assert found == [] and again.messages
    assert again.feed(a.path) == 3
    again.close()


HOSTILE = [
    "NEAR(a b)",
    'col:"x"',
    "a AND",
    "OR",
    "NOT x",
    "^start",
    '"unbalanced',
    "***",
    "a*b*c",
    "'; DROP TABLE turns; --",
    "{a b}: c",
    "(((",
    "\x00\x01",
    "-",
    '""',
    "a + b",
    "x:y:z",
    "\u202etxet",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_a_hostile_query_is_words_or_a_clear_refusal(
    index: ConversationIndex, project: Path, transcripts: Path, query: str
) -> None:
    a, b = two_agents(project, transcripts)
    index.rescan([a.path, b.path])
    try:
        index.search(query)
    except InvalidInput as refused:
        assert "nothing to search for" in refused.message


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_query_fts5_accepts_or_refused(query: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    db.execute("INSERT INTO t VALUES ('some words here')")
    try:
        expression = fts_expression(query)
    except InvalidInput:
        return
    db.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()


def test_two_processes_indexing_at_once_index_each_turn_once(
    project: Path, transcripts: Path
) -> None:
    sessions = [Session(transcripts) for _ in range(6)]
    for n, session in enumerate(sessions):
        for minute in range(40):
            session.tool("Bash", {"command": f"echo heron{n}"}, "x" * 2000 + " egret", minute)
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from runeconsole.services.project import Project
        from runeconsole.services.conversations.index import ConversationIndex
        paths = [Path(p) for p in sys.argv[1:]]
        index = ConversationIndex(Project(Path({str(project)!r})))
        for _ in range(3):
            index.rescan(paths)
            for path in reversed(paths):
                index.feed(path)
        """
    )
    argv = [sys.executable, "-c", script, *(str(s.path) for s in sessions)]
    running = [subprocess.Popen(argv, env=cli_env(), stderr=subprocess.PIPE) for _ in range(2)]
    for process in running:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()

    index = ConversationIndex(Project(project))
    assert len(index.search("egret", limit=1000)) == 6 * 40
    assert len(index.search("heron3", limit=1000)) == 40
    index.close()


def test_a_query_of_punctuation_alone_is_refused_clearly(index: ConversationIndex) -> None:
    with pytest.raises(InvalidInput, match="nothing to search for"):
        index.search('"" *** -')


def test_prune_drops_the_rows_of_transcripts_gone_past_the_policy_and_no_file_of_claude_s(
    project: Path, transcripts: Path, clock: ManualClock
) -> None:
    a, b = two_agents(project, transcripts)
    index = ConversationIndex(Project(project, clock=clock))
    index.rescan([a.path, b.path])
    a.path.unlink()
    retention = Retention(Project(project, clock=clock))

    first = {k.kind: k for k in retention.prune().kinds}["conversations"]
    assert (first.deleted, first.kept) == (0, 1)  # gone today: still searchable
    assert len(index.search("alembic")) == 1

    clock.advance(8 * 86400)
    dry = {k.kind: k for k in retention.prune(dry_run=True).kinds}["conversations"]
    assert dry.deleted == 1 and len(index.search("alembic")) == 1
    done = {k.kind: k for k in retention.prune().kinds}["conversations"]
    assert done.deleted == 1
    assert index.search("alembic") == [] and {h.key for h in index.search("migra*")} == {
        "reviewer-b"
    }
    assert b.path.exists() and sorted(transcripts.iterdir()) == [b.path]
    index.close()


def test_an_index_found_locked_as_it_is_set_up_is_opened_on_a_later_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite answers "locked" without waiting when two processes set a new index up at
    once (one turning it to WAL while the other makes its tables): opening tries again."""
    real, tries = index_schema._connect, []

    def locked_twice(path: Path) -> sqlite3.Connection:
        tries.append(path)
        if len(tries) <= 2:
            raise index_schema._Locked("database is locked")
        return real(path)

    monkeypatch.setattr(index_schema, "_connect", locked_twice)
    db = index_schema.connect(tmp_path / "index.sqlite")
    assert len(tries) == 3 and index_schema._tables(db) >= index_schema.TABLES
    db.close()


def test_an_index_still_locked_when_the_wait_is_over_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def always_locked(path: Path) -> sqlite3.Connection:
        raise index_schema._Locked("database is locked")

    monkeypatch.setattr(index_schema, "_connect", always_locked)
    monkeypatch.setattr(index_schema, "BUSY_TIMEOUT_MS", 100)
    with pytest.raises(RuneError, match="cannot open the conversation index: database is locked"):
        index_schema.connect(tmp_path / "index.sqlite")
