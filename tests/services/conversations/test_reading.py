"""Reading a transcript the real Claude Code 2.1.328 wrote into turns: every tool call with
its result, the subagent's turns under the call that started it, a task notification
as the system's, not the user's; read on as it grows; never crashed by bad input."""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path

import pytest

from runeconsole.services.conversations import reading
from runeconsole.services.conversations.locate import OperatorPrompts
from runeconsole.services.conversations.reading import (
    ConversationReader,
    merge,
    read_conversation,
)
from runeconsole.services.conversations.records import TEXT_LIMIT, subject_of
from runeconsole.services.conversations.turns import (
    ASSISTANT,
    COMPACTION,
    OPERATOR,
    PROMPT,
    RESUMPTION,
    SYSTEM,
    TEXT,
    TOOL,
    UNREADABLE,
    USER,
    Turn,
)
from tests.support.paths import FIXTURES

SESSION = "8e69a3ba-2b65-4373-a7bd-7b43123216b2"
PROJECT = FIXTURES / "claude_transcripts" / "-tmp-tx-project"
MAIN = PROJECT / f"{SESSION}.jsonl"
CALL = "toolu_bf204fcece5a48dcb5784ca8"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the fixture project, free to grow and break."""
    return Path(shutil.copytree(PROJECT, tmp_path / "-tmp-tx-project"))


def lines(turns: list[Turn]) -> list[tuple[int, str, str, str]]:
    return [(t.depth, t.speaker, t.kind, t.text) for t in turns]


def record(kind: str, content: object, **fields: object) -> bytes:
    entry = {
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": f"u-{random.random()}",
        "timestamp": "2026-11-29T06:00:00.000Z",
        "sessionId": SESSION,
        **fields,
    }
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as stream:
        stream.write(data)


def test_the_real_transcript_reads_as_the_turns_it_holds_in_order() -> None:
    conversation = read_conversation(MAIN)
    assert conversation.session_id == SESSION
    assert conversation.read_to == MAIN.stat().st_size
    assert conversation.skipped == 0 and conversation.error is None
    assert lines(conversation.turns) == [
        (0, USER, PROMPT, "Please do the migration"),
        (0, ASSISTANT, TOOL, "Bash: echo hello-from-bash"),
        (0, ASSISTANT, TOOL, "Write: /tmp/tx/project/notes.md"),
        (0, ASSISTANT, TOOL, "Task: look around"),
        (1, ASSISTANT, PROMPT, "List the files"),
        (1, ASSISTANT, TEXT, "Done. **All** good."),
        (0, ASSISTANT, TEXT, "Sub: I looked."),
        (0, SYSTEM, PROMPT, 'Agent "look around" finished\nDone. **All** good.'),
        (0, ASSISTANT, TEXT, "Nothing more to do."),
    ]


def test_every_tool_call_carries_its_subject_input_and_result() -> None:
    calls = [t for t in read_conversation(MAIN).turns if t.kind == TOOL]
    bash, write, task = calls
    assert (bash.tool, bash.subject, bash.result) == (
        "Bash",
        "echo hello-from-bash",
        "hello-from-bash",
    )
    assert bash.tool_input == {"command": "echo hello-from-bash", "description": "Say hello"}
    assert bash.tool_use_id == "toolu_0e42e9c0edbd4f23ad1ad369" and not bash.is_error
    assert write.subject == "/tmp/tx/project/notes.md"
    assert write.result.startswith("File created successfully at: /tmp/tx/project/notes.md")
    assert (task.tool, task.subject, task.tool_use_id) == ("Task", "look around", CALL)
    assert "Async agent launched successfully" in task.result


def test_the_subagent_is_nested_right_after_the_call_that_started_it() -> None:
    turns = read_conversation(MAIN).turns
    at = next(i for i, t in enumerate(turns) if t.tool_use_id == CALL)
    nested = turns[at + 1 : at + 3]
    assert [t.depth for t in nested] == [1, 1]
    assert {t.agent_id for t in nested} == {"aa1238b7c34d1c3b0"}
    assert {t.parent_tool_use_id for t in nested} == {CALL}
    assert all(t.path.endswith("subagents/agent-aa1238b7c34d1c3b0.jsonl") for t in nested)
    assert turns[at + 3].depth == 0


def test_a_task_notification_is_the_systems_notice_not_a_prompt_of_the_user() -> None:
    turns = read_conversation(MAIN).turns
    notice = next(t for t in turns if t.note == "task-notification")
    assert notice.speaker == SYSTEM
    assert [t.text for t in turns if t.speaker == USER] == ["Please do the migration"]


def test_each_turn_knows_where_its_record_starts_and_when_and_who_wrote_it() -> None:
    data = MAIN.read_bytes()
    for turn in read_conversation(MAIN).turns:
        source = Path(turn.path).read_bytes()
        line = source[turn.offset : source.index(b"\n", turn.offset)]
        entry = json.loads(line)
        assert entry["uuid"] == turn.uuid
        assert turn.at is not None and turn.session_id == SESSION
    assert data  # the main file read from its own bytes


def test_reading_from_an_offset_gives_only_the_turns_after_it() -> None:
    whole = read_conversation(MAIN).turns
    write = next(t for t in whole if t.tool == "Write")
    later = read_conversation(MAIN, start=write.offset).turns
    assert [t.key for t in later] == [t.key for t in whole if t.depth or t.offset >= write.offset]


def test_thinking_is_left_out_and_text_beside_it_kept(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    blocks = [
        {"type": "thinking", "thinking": "secret plan", "signature": "x"},
        {"type": "text", "text": "Hi"},
    ]
    path.write_bytes(record("assistant", blocks))
    turns = read_conversation(path).turns
    assert lines(turns) == [(0, ASSISTANT, TEXT, "Hi")]
    assert turns[0].index == 1


# -- following a session -------------------------------------------------------------


def test_a_reader_returns_only_what_was_appended_since_its_last_read(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    reader = ConversationReader(main)
    assert len(reader.read()) == 9
    assert reader.read() == []
    line = record("user", "And now the tests")
    append(main, line[:20])  # half a line: left for the next read
    assert reader.read() == []
    assert reader.read_to == MAIN.stat().st_size
    append(main, line[20:])
    assert lines(reader.read()) == [
        # the fixture ends with the process's end (cost-state): what comes after, resumed
        (0, SYSTEM, RESUMPTION, "Resumed: the session went on in a new Claude Code process"),
        (0, USER, PROMPT, "And now the tests"),
    ]
    assert reader.read_to == main.stat().st_size


def test_a_result_read_after_its_call_comes_again_with_the_call(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    reader = ConversationReader(main)
    turns = reader.read()
    call = {
        "type": "tool_use",
        "id": "toolu_new",
        "name": "Grep",
        "input": {"pattern": "TODO", "path": "src"},
    }
    append(main, record("assistant", [call]))
    first = [t for t in reader.read() if t.kind == TOOL]
    assert [(t.text, t.result) for t in first] == [("Grep: TODO in src", "")]
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_new",
        "content": "src/a.py:1",
        "is_error": True,
    }
    append(main, record("user", [result]))
    second = reader.read()
    assert [(t.key, t.result, t.is_error) for t in second] == [(first[0].key, "src/a.py:1", True)]
    merged = merge(merge(turns, first), second)
    assert [t.result for t in merged if t.tool == "Grep"] == ["src/a.py:1"]


def test_a_subagents_new_turns_are_read_and_placed_under_their_call(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    sub = project / SESSION / "subagents" / "agent-aa1238b7c34d1c3b0.jsonl"
    reader = ConversationReader(main)
    turns = reader.read()
    append(sub, record("assistant", [{"type": "text", "text": "One more thing"}], isSidechain=True))
    batch = reader.read()
    assert [(t.depth, t.parent_tool_use_id, t.text) for t in batch] == [(1, CALL, "One more thing")]
    merged = merge(turns, batch)
    at = next(i for i, t in enumerate(merged) if t.text == "One more thing")
    assert merged[at - 1].text == "Done. **All** good." and merged[at + 1].depth == 0


def test_a_new_subagent_file_is_followed_too(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    reader = ConversationReader(main)
    reader.read()
    folder = project / SESSION / "subagents"
    (folder / "agent-b2.meta.json").write_text(json.dumps({"toolUseId": "toolu_other"}))
    (folder / "agent-b2.jsonl").write_bytes(record("user", "Count the lines", isSidechain=True))
    assert [(t.depth, t.agent_id, t.parent_tool_use_id, t.text) for t in reader.read()] == [
        (1, "b2", "toolu_other", "Count the lines")
    ]


def test_a_later_reader_goes_on_from_an_earlier_ones_positions(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    sub = project / SESSION / "subagents" / "agent-aa1238b7c34d1c3b0.jsonl"
    earlier = ConversationReader(main)
    earlier.read()
    positions = earlier.positions()
    assert positions == {str(main): main.stat().st_size, str(sub): sub.stat().st_size}
    append(sub, record("assistant", [{"type": "text", "text": "Later"}], isSidechain=True))
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_0e42e9c0edbd4f23ad1ad369",
        "content": "x",
    }
    append(main, record("user", [result]))
    later = ConversationReader(main, starts=positions).read()
    assert [(t.depth, t.kind, t.text, t.note) for t in later] == [
        (0, TOOL, "(the result of a call read before)", "result only"),
        (1, TEXT, "Later", ""),
    ]
    assert later[0].tool_use_id == "toolu_0e42e9c0edbd4f23ad1ad369" and later[0].result == "x"


def test_a_subagents_file_read_alone_is_nested_under_its_call() -> None:
    sub = PROJECT / SESSION / "subagents" / "agent-aa1238b7c34d1c3b0.jsonl"
    turns = read_conversation(sub).turns
    assert [(t.depth, t.parent_tool_use_id) for t in turns] == [(1, CALL), (1, CALL)]


def test_a_file_rewritten_under_the_reader_is_read_again_from_the_start(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    reader = ConversationReader(main)
    reader.read()
    main.write_bytes(record("user", "A new beginning"))
    turns = reader.read()
    assert reader.restarted
    assert lines(turns)[:2] == [
        (0, SYSTEM, UNREADABLE, "The file was rewritten: read again from the start"),
        (0, USER, PROMPT, "A new beginning"),
    ]
    # the subagent's turns are given again (their call is gone: they come last)
    assert [t.depth for t in turns[2:]] == [1, 1]


def test_a_file_rewritten_to_a_longer_one_is_noticed_by_its_last_bytes(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    reader = ConversationReader(main)
    reader.read()
    data = bytearray(main.read_bytes())
    data[-10] = ord("X") if data[-10] != ord("X") else ord("Y")
    with open(main, "r+b") as stream:  # same inode, same size, changed in place
        stream.write(bytes(data) + record("user", "After"))
    turns = reader.read()
    assert reader.restarted and turns[0].kind == UNREADABLE
    assert turns[-1].text == "After"


def test_a_start_past_the_end_reads_the_rewritten_file_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(record("user", "short now"))
    reader = ConversationReader(path, start=10_000)
    assert [t.kind for t in reader.read()] == [UNREADABLE, PROMPT] and reader.restarted


def test_a_file_that_vanishes_is_said_once_and_read_again_when_it_returns(project: Path) -> None:
    main = project / f"{SESSION}.jsonl"
    reader = ConversationReader(main)
    reader.read()
    saved = main.read_bytes()
    main.unlink()
    gone = reader.read()
    assert [t.kind for t in gone] == [UNREADABLE] and "cannot be read" in gone[0].text
    assert reader.read() == []
    main.write_bytes(saved)
    back = reader.read()
    assert back[0].kind == UNREADABLE and len(back) == 10


def test_a_missing_file_is_an_error_not_a_crash(tmp_path: Path) -> None:
    conversation = read_conversation(tmp_path / "nope.jsonl")
    assert conversation.turns == [] and conversation.error


# -- bad input -----------------------------------------------------------------------


def test_lines_that_cannot_be_read_are_marked_in_place_and_counted(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(
        record("user", "first")
        + b"this is not json\n"
        + b"[1, 2, 3]\n"
        + b'{"type":"user","message":42}\n'
        + b'{"type":"frobnicate","x":1}\n'
        + b'{"type":"user", "broken\n'
        + b"[" * 100_000
        + b"\n"
        + record("user", "last")
    )
    conversation = read_conversation(path)
    assert [(t.kind, t.text.split(" (")[0]) for t in conversation.turns] == [
        (PROMPT, "first"),
        (UNREADABLE, "Not JSON"),
        (UNREADABLE, "Not a JSON object but list"),
        (UNREADABLE, "A user record not understood"),
        (UNREADABLE, "Not JSON"),
        (UNREADABLE, "Not JSON"),  # nested too deep
        (PROMPT, "last"),
    ]
    assert conversation.skipped == 5


def test_a_record_written_right_after_a_line_cut_short_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    cut = record("assistant", [{"type": "text", "text": "I was cut"}])[:70]
    path.write_bytes(record("user", "first") + cut + record("user", "after the crash"))
    turns = read_conversation(path).turns
    assert [(t.kind, t.text.split(" (")[0]) for t in turns] == [
        (PROMPT, "first"),
        (UNREADABLE, "Not JSON"),
        (PROMPT, "after the crash"),
    ]
    assert turns[2].offset == turns[1].offset + 70
    data = path.read_bytes()
    assert data[turns[2].offset : turns[2].offset + 2] == b'{"'


def test_invalid_utf8_inside_a_text_is_replaced_not_lost(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(record("user", "café").replace("é".encode(), b"\xff\xfe"))
    (turn,) = read_conversation(path).turns
    assert turn.text == "caf\ufffd\ufffd" and "invalid UTF-8" in turn.note


def test_a_line_of_ten_megabytes_is_read_and_its_result_cut(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat big"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "x" * 10_000_000}
    path.write_bytes(record("assistant", [call]) + record("user", [result]))
    (turn,) = read_conversation(path).turns
    assert len(turn.result) == TEXT_LIMIT
    assert turn.note == f"cut: {10_000_000 - TEXT_LIMIT:,} more characters"


def test_a_line_longer_than_a_read_is_skipped_and_what_follows_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "READ_LIMIT", 4096)  # bytes in memory at once
    path = tmp_path / f"{SESSION}.jsonl"
    many = b"".join(record("user", f"prompt {i}") for i in range(40))
    path.write_bytes(record("user", "first") + record("user", "y" * 20_000) + many)
    reader = ConversationReader(path)
    turns = reader.read()
    assert [t.kind for t in turns[:2]] == [PROMPT, UNREADABLE]
    assert turns[1].text == "A line of more than 4,096 bytes: skipped"
    assert [t.text for t in turns[2:]] == [f"prompt {i}" for i in range(40)]
    assert reader.read_to == path.stat().st_size and reader.skipped == 1
    append(path, b"z" * 9000)  # a long line still being written
    assert [t.kind for t in reader.read()] == [UNREADABLE] and reader.skipped == 2
    assert reader.read() == []
    append(path, b"\n" + record("user", "after"))
    assert [t.text for t in reader.read()] == ["after"]


def test_random_bytes_and_cut_lines_never_crash_the_reader(tmp_path: Path) -> None:
    rng = random.Random(33)
    good = MAIN.read_bytes().split(b"\n")
    for round_ in range(60):
        path = tmp_path / f"fuzz-{round_}.jsonl"
        parts: list[bytes] = []
        for line in rng.sample(good, 12):
            choice = rng.random()
            if choice < 0.25:
                line = line[: rng.randrange(len(line) + 1)]
            elif choice < 0.5 and line:
                at = rng.randrange(len(line))
                line = line[:at] + bytes([rng.randrange(256)]) + line[at + 1 :]
            elif choice < 0.6:
                line = rng.randbytes(rng.randrange(200))
            parts.append(line)
        path.write_bytes(b"\n".join(parts) + b"\n")
        reader = ConversationReader(path)
        turns = reader.read()
        assert all(isinstance(t, Turn) for t in turns)
        assert reader.read_to == path.stat().st_size
        # and grown, cut and rewritten while followed
        append(path, rng.randbytes(100))
        reader.read()
        path.write_bytes(rng.randbytes(rng.randrange(1, 300)))
        reader.read()


def test_a_fifty_megabyte_transcript_reads_in_well_under_two_seconds(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    body = MAIN.read_bytes()
    with open(path, "wb") as stream:
        while stream.tell() < 50 * 1024 * 1024:
            stream.write(body)
    started = time.perf_counter()
    conversation = read_conversation(path)
    took = time.perf_counter() - started
    assert len(conversation.turns) > 2000 and conversation.skipped == 0
    assert took < 2.0, f"{took:.2f} s"


# -- who spoke -----------------------------------------------------------------------


def test_the_operators_prompts_are_marked_with_how_they_were_sent(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(
        record("user", "Please do the migration")
        + record("user", "Run  the tests\nagain ")
        + record("user", "Line 12: this name is wrong")
    )
    operator = OperatorPrompts(
        [("Run the tests again", "say"), ("Line 12: this name is wrong", "review")]
    )
    turns = read_conversation(path, operator=operator).turns
    assert [(t.speaker, t.note) for t in turns] == [
        (USER, ""),
        (OPERATOR, "say"),
        (OPERATOR, "review"),
    ]


def test_a_long_paste_is_shown_without_its_tags_and_still_known_as_the_operators(
    tmp_path: Path,
) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    sent = "\n".join(f"line {i}: check item {i}" for i in range(30))
    kept = f'<pasted_content id="ccb5">\n{sent}\n</pasted_content id="ccb5">'  # as 2.1.328 keeps it
    path.write_bytes(record("user", kept) + record("user", f"See: {kept}"))
    turns = read_conversation(path, operator=OperatorPrompts([(sent, "say")])).turns
    assert [(t.speaker, t.note, t.text) for t in turns] == [
        (OPERATOR, "say; pasted", sent),
        (USER, "pasted", f"See: {sent}"),
    ]


def test_compactions_and_resumptions_are_marked(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "level": "info",
        "compactMetadata": {"trigger": "manual", "preTokens": 45000},
        "uuid": "b1",
        "timestamp": "2026-11-29T06:00:00.000Z",
        "sessionId": SESSION,
    }
    path.write_bytes(
        record("user", "old prompt", sessionId="11111111-2222-3333-4444-555555555555")
        + record("user", "new prompt")
        + json.dumps(boundary).encode()
        + b"\n"
        + record(
            "user", "This session is being continued… Summary: did things", isCompactSummary=True
        )
    )
    turns = read_conversation(path).turns
    assert [(t.kind, t.text) for t in turns] == [
        (RESUMPTION, "Resumed from session 11111111-2222-3333-4444-555555555555"),
        (PROMPT, "old prompt"),
        (
            RESUMPTION,
            f"Continued as session {SESSION} (after session 11111111-2222-3333-4444-555555555555)",
        ),
        (PROMPT, "new prompt"),
        (COMPACTION, "Conversation compacted (manual, 45,000 tokens before)"),
        (COMPACTION, "This session is being continued… Summary: did things"),
    ]


@pytest.mark.parametrize(
    ("tool", "tool_input", "subject"),
    [
        ("Bash", {"command": "ls -la\necho more"}, "ls -la"),
        ("Edit", {"file_path": "/a/b.py", "old_string": "x"}, "/a/b.py"),
        ("Grep", {"pattern": "def main"}, "def main"),
        ("WebFetch", {"url": "https://example.com", "prompt": "read"}, "https://example.com"),
        ("Agent", {"description": "look around", "prompt": "List"}, "look around"),
        ("mcp__x__y", {"thing": "value"}, "value"),
        ("Bash", None, ""),
    ],
)
def test_a_tool_calls_subject_is_what_it_acted_on(
    tool: str, tool_input: object, subject: str
) -> None:
    assert subject_of(tool, tool_input) == subject


def test_a_turn_read_from_a_directory_is_an_error(tmp_path: Path) -> None:
    os.mkdir(tmp_path / "dir.jsonl")
    assert read_conversation(tmp_path / "dir.jsonl").error == "not a regular file"
