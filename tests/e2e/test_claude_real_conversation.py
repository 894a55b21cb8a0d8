"""The conversation reader on transcripts the real Claude Code binary (pinned in
.ci/claude-code-version) writes, against the Messages-API stand-in: a session in print
mode with a Bash call, a Write, an Edit and a subagent (its own Bash call), resumed to
compact it (``/compact``, a real compaction), resumed again with a prompt the operator
sent, then forked. The turns come in order, the subagent's under its call, the
compaction, the resumptions and the fork marked, the operator's prompt as theirs; a
reader following the session gets each run's turns only; ``runeconsole conversation``
finds the agent's transcript from its working directory. Skipped, saying why, where the
binary is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runeconsole.services.conversations.locate import (
    OperatorPrompts,
    project_dir_name,
    record_sent,
)
from runeconsole.services.conversations.reading import ConversationReader, read_conversation
from runeconsole.services.conversations.turns import (
    ASSISTANT,
    COMPACTION,
    OPERATOR,
    PROMPT,
    RESUMPTION,
    SYSTEM,
    TEXT,
    TOOL,
    USER,
    Turn,
)
from runeconsole.services.project import Project
from tests.support.claude_api import MessagesApi, text_turn, tool_turn
from tests.support.claude_api import Turn as Answer
from tests.support.claude_binary import API_KEY, binary, new_project
from tests.support.claude_tasks import prepare_home
from tests.support.cli import CliResult

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]

SUBTASK = "SUBTASK: list the files of the project"
TASK = "Do the migration"
SAID = "Operator here: run the tests again"
SUMMARY = "Summary: a migration, notes written and edited, a survey of the files."


class RoutedApi(MessagesApi):
    """The stand-in, with the subagent's requests (their first message is the subagent's
    prompt) answered from a script of their own: the two loops run at once."""

    def __init__(self, script: list[Answer], subagent: list[Answer]) -> None:
        super().__init__(script)
        self.subagent = list(subagent)

    def next_turn(self, body: dict[str, Any]) -> Answer:
        first = json.dumps((body.get("messages") or [{}])[0])
        if SUBTASK in first:
            with self.lock:
                return self.subagent.pop(0) if self.subagent else text_turn("Sub: nothing more.")
        return super().next_turn(body)


def claude(root: Path, home: Path, api: MessagesApi, *args: str) -> None:
    path, why = binary()
    assert path is not None, why
    env = dict(os.environ) | {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": API_KEY,
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    env.pop("TMUX", None)
    done = subprocess.run(
        [str(path), *args], cwd=root, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, f"claude {args}: {done.returncode}\n{done.stdout}\n{done.stderr}"


def shown(turns: list[Turn]) -> list[tuple[int, str, str, str]]:
    """(depth, speaker, kind, first line) of each turn; a tool call's with its result."""
    rows = []
    for turn in turns:
        text = turn.text.split("\n", 1)[0]
        if turn.kind == TOOL:
            text += f" -> {turn.result.strip().splitlines()[0] if turn.result.strip() else ''}"
        rows.append((turn.depth, turn.speaker, turn.kind, text[:60]))
    return rows


def test_a_real_sessions_turns_compaction_resumptions_and_fork_are_read_in_order(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Callable[..., CliResult],
) -> None:
    root, home = new_project(tmp_path)
    config = prepare_home(home, root, [])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    session = str(uuid.uuid4())
    notes = str(root / "notes.md")
    script = [
        tool_turn("Bash", {"command": "echo hello-from-bash", "description": "Say hello"}),
        tool_turn("Write", {"file_path": notes, "content": "migration notes\n"}),
        tool_turn("Edit", {"file_path": notes, "old_string": "notes", "new_string": "NOTES"}),
        tool_turn("Task", {"description": "survey", "prompt": SUBTASK,
                           "subagent_type": "general-purpose"}),
        text_turn("Main: the survey runs."),
    ]  # fmt: skip
    subagent = [
        tool_turn("Bash", {"command": "ls", "description": "List"}),
        text_turn("Sub: notes.md is there."),
    ]
    with RoutedApi(script, subagent) as api:
        tools = "Bash,Write,Edit,Task"
        claude(root, home, api, "-p", TASK, "--allowedTools", tools, "--session-id", session)
        transcript = config / "projects" / project_dir_name(root) / f"{session}.jsonl"
        follower = ConversationReader(transcript)
        first = follower.read()

        api.add(text_turn(SUMMARY))  # the compaction's summary request
        claude(root, home, api, "-p", "--resume", session, "/compact")
        compacted = follower.read()

        record_sent(Project(root), "worker-a", SAID)
        api.add(text_turn("Tests pass."))
        claude(root, home, api, "-p", "--resume", session, SAID)
        resumed = follower.read()

        api.add(text_turn("Forked and done."))
        claude(root, home, api, "-p", "--resume", session, "--fork-session", "Go on as a fork")

    # The first run, whole: every call with its result, the subagent under its call.
    rows = shown(first)
    assert rows[:2] == [
        (0, USER, PROMPT, TASK),
        (0, ASSISTANT, TOOL, "Bash: echo hello-from-bash -> hello-from-bash"),
    ]
    write, edit, call = first[2:5]
    assert (write.tool, write.subject) == ("Write", notes)
    assert write.result.startswith(f"File created successfully at: {notes}")
    assert (edit.tool, edit.subject) == ("Edit", notes)
    assert edit.tool_input is not None and edit.tool_input["new_string"] == "NOTES"
    assert f"The file {notes} has been updated" in edit.result and not edit.is_error
    assert (call.tool, call.subject) == ("Task", "survey")
    assert "Async agent launched successfully" in call.result
    assert rows[5:8] == [
        (1, ASSISTANT, PROMPT, SUBTASK),
        (1, ASSISTANT, TOOL, "Bash: ls -> notes.md"),
        (1, ASSISTANT, TEXT, "Sub: notes.md is there."),
    ]
    assert {t.parent_tool_use_id for t in first[5:8]} == {call.tool_use_id}
    assert (0, ASSISTANT, TEXT, "Main: the survey runs.") in rows[8:]
    notice = next(t for t in first if t.note == "task-notification")
    assert notice.speaker == SYSTEM and "survey" in notice.text
    assert [t.text for t in first if t.speaker == USER] == [TASK]
    assert (Path(notes).read_text()) == "migration NOTES\n"

    # The compaction, as the real binary wrote it, after the run it resumed.
    assert [(t.kind, t.text.split(" (")[0]) for t in compacted[:2]] == [
        (RESUMPTION, "Resumed: the session went on in a new Claude Code process"),
        (COMPACTION, "Conversation compacted"),
    ]
    assert compacted[2].kind == COMPACTION and compacted[2].speaker == SYSTEM
    assert "manual" in compacted[1].text and compacted[2].note == "summary"
    assert compacted[2].text.startswith("This session is being continued")
    assert SUMMARY in compacted[2].text
    assert (USER, "/compact") in [(t.speaker, t.text) for t in compacted]

    # Resumed with the operator's prompt: marked theirs when the reader knows it.
    assert [t.kind for t in resumed[:2]] == [RESUMPTION, PROMPT]
    operator = OperatorPrompts.of(Project(root), "worker-a")
    whole = read_conversation(transcript, operator=operator).turns
    said = [t for t in whole if t.text == SAID]
    assert [(t.speaker, t.note) for t in said] == [(OPERATOR, "say")]
    assert [t.key for t in whole] == [t.key for t in first + compacted + resumed]

    # The fork: a file of its own, the session it came from marked first.
    fork = next(p for p in transcript.parent.glob("*.jsonl") if p != transcript)
    forked = read_conversation(fork).turns
    assert forked[0].kind == RESUMPTION
    assert forked[0].text.startswith(f"Forked from session {session}")
    assert forked[-2:][0].text == "Go on as a fork" and forked[-1].text == "Forked and done."

    # The CLI finds it from the agent's working directory.
    identities = root / ".claude" / "state" / "identities"
    identities.mkdir(parents=True)
    fields = {"role": "worker", "name": "a", "claude": {"cwd": str(root)}}
    (identities / "worker-a.json").write_text(json.dumps(fields))
    os.utime(fork, (1, 1))  # the session of its own newest
    result = cli("conversation", "worker-a", "--root", str(root))
    assert result.code == 0, result.err
    assert f"session {session}" in result.out.splitlines()[0]
    assert "operator  prompt      Operator here: run the tests again  [say]" in result.out
    assert "    assistant tool        Bash: ls  → notes.md" in result.out
