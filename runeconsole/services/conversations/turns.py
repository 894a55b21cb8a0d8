"""A Claude Code conversation as the console shows it: its turns in order.

Claude Code keeps each session as JSONL (``~/.claude/projects/<cwd as dashes>/<session>.jsonl``,
the ``transcript_path`` of every hook payload), one record a line: ``user`` and
``assistant`` messages (content blocks: ``text``, ``thinking``, ``tool_use``,
``tool_result``), and records the console does not show (``attachment``,
``queue-operation``, ``api-request*``, ``last-prompt``, ``cost-state``, …). A subagent's
conversation is a file of its own beside it, ``<session>/subagents/agent-<id>.jsonl``,
with ``agent-<id>.meta.json`` naming the tool call that started it (``toolUseId``).

A ``Turn`` is one thing said or done: a prompt (the user's, or the operator's: a ``say``
or a review comment sent from here), the assistant's text (Markdown), one tool call with
its input and its result, a compaction or a resumption marked, a subagent's turns nested
one level under the call that started it, or a place that could not be read (why). Every
turn knows where it starts in its file (``offset``), so a search hit opens at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# What a turn is.
PROMPT, TEXT, TOOL = "prompt", "text", "tool"
COMPACTION, RESUMPTION, UNREADABLE = "compaction", "resumption", "unreadable"
KINDS = (PROMPT, TEXT, TOOL, COMPACTION, RESUMPTION, UNREADABLE)
# Who spoke.
USER, OPERATOR, ASSISTANT, SYSTEM = "user", "operator", "assistant", "system"
SPEAKERS = (USER, OPERATOR, ASSISTANT, SYSTEM)


@dataclass(frozen=True)
class Turn:
    kind: str  # one of KINDS
    speaker: str  # one of SPEAKERS
    text: str  # the prompt, the assistant's Markdown, a tool call's one line, a mark, a reason
    at: datetime | None = None
    session_id: str = ""
    uuid: str = ""  # the record's uuid ("" where it has none): where a fork starts
    path: str = ""  # the file it was read from (a subagent's own file, for its turns)
    offset: int = 0  # where its record starts in that file (bytes)
    tool: str = ""  # TOOL: the tool's name
    subject: str = ""  # TOOL: what it acted on (a command, a file, a pattern, a URL)
    tool_input: dict[str, Any] | None = None  # TOOL: the whole input
    result: str = ""  # TOOL: what it returned (as text)
    is_error: bool = False  # TOOL: its result was an error
    tool_use_id: str = ""  # TOOL: the call's id (a subagent's file names it)
    depth: int = 0  # 0: the session's own turn; 1: a subagent's, nested under its call
    agent_id: str = ""  # a subagent's id, for its turns
    parent_tool_use_id: str = ""  # a subagent's turn: the call (Task/Agent) that started it
    index: int = 0  # which of its record's turns (a record may hold several blocks)
    note: str = ""  # e.g. "say" / "review" (an operator's prompt), "task-notification", a cut

    @property
    def key(self) -> tuple[str, int, int]:
        """Which turn this is: a later read may return a turn again, changed (a tool call
        whose result came since); the one with the same key replaces it."""
        return (self.path, self.offset, self.index)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "speaker": self.speaker,
            "text": self.text,
            "at": self.at.isoformat() if self.at else None,
            "session_id": self.session_id,
            "uuid": self.uuid,
            "path": self.path,
            "offset": self.offset,
            "tool": self.tool,
            "subject": self.subject,
            "tool_input": self.tool_input,
            "result": self.result,
            "is_error": self.is_error,
            "tool_use_id": self.tool_use_id,
            "depth": self.depth,
            "agent_id": self.agent_id,
            "parent_tool_use_id": self.parent_tool_use_id,
            "index": self.index,
            "note": self.note,
        }


@dataclass
class Conversation:
    """One session's turns as read so far; ``read_to`` is where the next read goes on
    from (only what was appended since is read), ``skipped`` counts the lines that could
    not be read (each also a turn of kind UNREADABLE at its place)."""

    session_id: str
    path: str
    turns: list[Turn] = field(default_factory=list)
    read_to: int = 0
    skipped: int = 0
    error: str | None = None  # the file itself cannot be read (gone, not a file): why
