"""Claude Code's transcript records into turns: ``Records`` decodes one file's lines as
they are read (``reading`` follows the files and hands it their bytes).

What a transcript holds and how it is shown:

- ``user`` records: a prompt (the user's, the operator's when ``OperatorPrompts`` knows it
  was sent from here, the system's: a ``<task-notification>``, a command's output), or the
  results of tool calls (``tool_result`` blocks, joined to their call by ``tool_use_id``);
  ``isMeta`` ones (injected context) are not shown; ``isCompactSummary`` ones are the
  summary a compaction left: a COMPACTION turn.
- ``assistant`` records: one block each, usually (a message is written a block a line):
  ``text`` (Markdown), ``tool_use`` (a TOOL turn: the tool, its subject, its whole input),
  ``thinking`` (left out).
- ``system`` records with ``subtype`` ``compact_boundary`` (or ``microcompact_boundary``):
  a COMPACTION turn. Other types (``attachment``, ``queue-operation``, ``api-request*``,
  ``last-prompt``, ``cost-state``, …, and any new ones) are not shown: a line is decoded
  only when a cheap look at its bytes says it may be one of those shown.
- A record whose ``sessionId`` is not the one the file was read under so far: the
  conversation continues from (or as) another session: a RESUMPTION turn.
- Subagents: ``<session>/subagents/agent-<id>.jsonl``, with ``agent-<id>.meta.json`` whose
  ``toolUseId`` names the Task/Agent call that started it; their turns come right after
  that call, ``depth`` one more than its, ``parent_tool_use_id`` naming it. Reading a
  subagent's file on its own (``read_conversation(that_file)``) gives its turns the same.

Bad input never raises: a line that is not a JSON object, not UTF-8, or too long to
decode is an UNREADABLE turn at its place, counted in ``skipped``; texts and results
longer than ``TEXT_LIMIT`` are cut with a note.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any

from runeconsole.services.conversations.locate import OperatorPrompts
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

TEXT_LIMIT = 100_000  # characters of a prompt, text or result kept; the rest is cut
SUBJECT_LIMIT = 200  # characters of a tool call's subject
LINE_LIMIT = 64 * 1024 * 1024  # a longer line is not decoded (an UNREADABLE turn)
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
# A prompt's ``origin.kind`` when a person wrote it (else the system did: a task
# notification, an auto-continuation, a plugin…); "" when the record has no origin.
PERSON_ORIGINS = frozenset(
    {"", "human", "person", "voice-call", "suggestion", "remote", "composer", "unclassified"}
)
_SESSION = re.compile(r"[0-9a-fA-F-]{8,64}")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# A long paste, as Claude Code keeps it in the prompt (the tags are not what was sent).
_PASTE = re.compile(
    r'<pasted_content id="[^"<>\n]{0,64}">\n?|\n?</pasted_content id="[^"<>\n]{0,64}">'
)
# Lines that may be shown hold one of these (Claude Code writes JSON without spaces);
# every other line is skipped undecoded, unless it does not even look like an object.
_SHOWN = (
    b'"type":"user"',
    b'"type":"assistant"',
    b"compact_boundary",
    b'"type":"cost-state"',  # written as a Claude Code process ends: what follows, resumed
    b'"type": "user"',  # written by other tools, with spaces
    b'"type": "assistant"',
)


# -- one file --------------------------------------------------------------------------


def _cut(text: str, limit: int = TEXT_LIMIT) -> tuple[str, str]:
    if len(text) <= limit:
        return text, ""
    return text[:limit], f"cut: {len(text) - limit:,} more characters"


def _when(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def as_text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _one_line(text: str, limit: int = SUBJECT_LIMIT) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


_SUBJECT_KEYS = (
    "command",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
    "skill",
    "prompt",
    "subject",
    "taskId",
    "name",
)


def subject_of(tool: str, tool_input: object) -> str:
    """What a tool call acts on, on one line: a command, a file, a pattern, a URL, a
    subagent's description, the first question asked…"""
    if not isinstance(tool_input, dict):
        return ""
    if tool in SUBAGENT_TOOLS:
        found = as_text(tool_input.get("description")) or as_text(tool_input.get("prompt"))
        return _one_line(found)
    if tool in ("Grep", "Glob"):
        pattern, where = as_text(tool_input.get("pattern")), as_text(tool_input.get("path"))
        return _one_line(f"{pattern} in {where}" if pattern and where else pattern or where)
    if tool == "AskUserQuestion":
        questions = tool_input.get("questions")
        if isinstance(questions, list) and questions and isinstance(questions[0], dict):
            return _one_line(as_text(questions[0].get("question")))
    if tool == "TodoWrite":
        todos = tool_input.get("todos")
        return f"{len(todos)} todos" if isinstance(todos, list) else ""
    for key in _SUBJECT_KEYS:
        if found := as_text(tool_input.get(key)):
            return _one_line(found)
    for value in tool_input.values():
        if isinstance(value, str) and value.strip():
            return _one_line(value)
    return ""


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)[:TEXT_LIMIT]
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                parts.append(as_text(block.get("text")))
            elif kind == "image":
                parts.append("[image]")
            elif kind == "document":
                parts.append("[document]")
    return "\n".join(parts)


def _tag(text: str, name: str) -> str:
    """The text inside ``<name>…</name>`` ("" when there is none)."""
    start = text.find(f"<{name}>")
    if start < 0:
        return ""
    start += len(name) + 2
    end = text.find(f"</{name}>", start)
    return text[start : end if end >= 0 else len(text)].strip()


def _notification(text: str) -> str:
    """A ``<task-notification>`` as a person reads it: its summary, then its result."""
    summary = _tag(text, "summary") or _tag(text, "status") or "Task notification"
    result = _tag(text, "result")
    return f"{summary}\n{result}" if result else summary


class Records:
    """The turns of one transcript file's lines, in the order read: the session each was
    written under, the calls waiting for their results, where the conversation goes on
    from another session or another process."""

    def __init__(
        self,
        path: str,
        *,
        own_session: str = "",
        operator: OperatorPrompts | None = None,
        depth: int = 0,
        agent_id: str = "",
        parent: str = "",
    ) -> None:
        self.path = path
        self.own_session = own_session
        self.session = own_session  # the session the last record shown was written under
        self.operator = operator
        self.depth = depth
        self.agent_id = agent_id
        self.parent = parent
        self.skipped = 0
        self._calls: dict[str, Turn] = {}  # tool_use_id -> its call, until its result comes
        self._ended = False  # a process's end (cost-state) read, no turn since
        self._forked_from = ""  # the session a fork's carried-over turns come from

    def forget(self) -> None:
        """From the start of the file again: no call waits, the file's own session."""
        self._ended = False
        self._calls.clear()
        self.session = self.own_session

    def begin_file(self, data: bytes) -> None:
        """The first bytes of the file: a fork names the session it was made from."""
        self._forked_from = _forked_from(data, self.own_session)

    def lines(self, data: bytes, end: int, base: int) -> Iterator[Turn]:
        """The turns of ``data``'s lines up to ``end`` (read from byte ``base``)."""
        position = 0
        while position < end:
            stop = data.find(b"\n", position, end + 1)
            if stop < 0:
                stop = end
            line = data[position:stop]
            offset = base + position
            position = stop + 1
            if not line.strip():
                continue
            if not any(mark in line for mark in _SHOWN):
                # Not one of ours, unless it is not even an object (then say why).
                head, tail = line[:1], line.rstrip()[-1:]
                if head == b"{" and tail == b"}":
                    continue
            yield from self._line(line, offset)

    def _line(self, line: bytes, offset: int) -> Iterator[Turn]:
        if len(line) > LINE_LIMIT:
            self.skipped += 1
            yield self._unreadable(offset, f"A line of {len(line):,} bytes, too long to read")
            return
        note = ""
        try:
            entry = json.loads(line)
        except UnicodeDecodeError:
            try:
                entry = json.loads(line.decode("utf-8", "replace"))
                note = "invalid UTF-8 replaced"
            except (ValueError, RecursionError) as error:
                yield from self._not_json(line, offset, error)
                return
        except (ValueError, RecursionError) as error:
            yield from self._not_json(line, offset, error)
            return
        if not isinstance(entry, dict):
            yield self.bad(offset, f"Not a JSON object but {type(entry).__name__}")
            return
        kind = entry.get("type")
        if kind == "cost-state":
            self._ended = True  # the process that wrote the file so far ended here
            return
        if kind not in ("user", "assistant", "system"):
            return  # a record of a type not shown
        try:
            if kind == "system":
                turns = list(self._system(entry, offset))
            else:
                turns = list(self._message(entry, kind, offset))
        except (AttributeError, TypeError, ValueError, KeyError) as error:  # malformed
            yield self.bad(offset, f"A {kind} record not understood ({error})")
            return
        if turns:
            yield from self._marks(entry, offset)
        for turn in turns:
            yield replace(turn, note=_join(turn.note, note)) if note else turn

    def _not_json(self, line: bytes, offset: int, error: BaseException) -> Iterator[Turn]:
        """The place marked; and a record written whole right after a line cut short (a
        process killed mid-write, the session resumed) read on its own."""
        yield self.bad(offset, f"Not JSON ({_reason(error)})")
        tried = 0
        for start in _record_starts(line):
            tried += 1
            if tried > GLUED_TRIES:
                break
            try:
                entry = json.loads(line[start:])
            except (ValueError, RecursionError):
                continue
            if isinstance(entry, dict) and isinstance(entry.get("type"), str):
                yield from self._line(line[start:], offset + start)
                return

    def bad(self, offset: int, reason: str) -> Turn:
        self.skipped += 1
        return self._unreadable(offset, reason)

    def note(self, offset: int, reason: str) -> Turn:
        """A mark about the file itself (rewritten, gone): its own key at that offset."""
        return replace(self._unreadable(offset, reason), index=-2)

    def _unreadable(self, offset: int, reason: str) -> Turn:
        return Turn(
            kind=UNREADABLE,
            speaker=SYSTEM,
            text=reason,
            session_id=self.session,
            path=self.path,
            offset=offset,
            depth=self.depth,
            agent_id=self.agent_id,
            parent_tool_use_id=self.parent,
        )

    def _turn(self, entry: dict[str, Any], offset: int, **fields: Any) -> Turn:
        return Turn(
            at=_when(entry.get("timestamp")),
            session_id=as_text(entry.get("sessionId")) or self.session,
            uuid=as_text(entry.get("uuid")),
            path=self.path,
            offset=offset,
            depth=self.depth,
            agent_id=self.agent_id or as_text(entry.get("agentId")),
            parent_tool_use_id=self.parent,
            **fields,
        )

    def _marks(self, entry: dict[str, Any], offset: int) -> Iterator[Turn]:
        """Where the conversation goes on from another session, or in another process:
        before the first turn shown after it."""
        if self._forked_from:
            text = f"Forked from session {self._forked_from} (its conversation carried over)"
            self._forked_from = ""
            yield self._turn(entry, offset, kind=RESUMPTION, speaker=SYSTEM, text=text, index=-3)
        session = entry.get("sessionId")
        if isinstance(session, str) and session and session != self.session:
            before, self.session = self.session, session
            if before:  # (the first record names the session)
                if session == self.own_session:
                    text = f"Continued as session {session} (after session {before})"
                else:
                    text = f"Resumed from session {session}"
                self._ended = False
                yield self._turn(
                    entry, offset, kind=RESUMPTION, speaker=SYSTEM, text=text, index=-1
                )
        if self._ended:
            self._ended = False
            text = "Resumed: the session went on in a new Claude Code process"
            yield self._turn(entry, offset, kind=RESUMPTION, speaker=SYSTEM, text=text, index=-4)

    def _system(self, entry: dict[str, Any], offset: int) -> Iterator[Turn]:
        subtype = entry.get("subtype")
        if subtype not in ("compact_boundary", "microcompact_boundary"):
            return
        meta = entry.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        if subtype == "microcompact_boundary":
            text = "Older tool results cleared from the context (microcompact)"
        else:
            text = as_text(entry.get("content")) or "Conversation compacted"
            details = [as_text(meta.get("trigger"))]
            tokens = meta.get("preTokens")
            if isinstance(tokens, int) and not isinstance(tokens, bool):
                details.append(f"{tokens:,} tokens before")
            if found := [d for d in details if d]:
                text = f"{text} ({', '.join(found)})"
        yield self._turn(entry, offset, kind=COMPACTION, speaker=SYSTEM, text=text)

    def _message(self, entry: dict[str, Any], kind: str, offset: int) -> Iterator[Turn]:
        message = entry.get("message")
        if not isinstance(message, dict):
            raise ValueError("no message")
        content = message.get("content")
        if kind == "user":
            yield from self._user(entry, content, offset)
        else:
            yield from self._assistant(entry, content, offset)

    def _user(self, entry: dict[str, Any], content: object, offset: int) -> Iterator[Turn]:
        if entry.get("isCompactSummary") is True:
            text, cut = _cut(_result_text(content))
            yield self._turn(
                entry,
                offset,
                kind=COMPACTION,
                speaker=SYSTEM,
                text=text,
                note=_join("summary", cut),
            )
            return
        if entry.get("isMeta") is True:
            return
        blocks: list[object] = (
            [content] if isinstance(content, str) else content if isinstance(content, list) else []
        )
        texts: list[str] = []
        for index, block in enumerate(blocks):
            if isinstance(block, str):
                texts.append(block)
            elif not isinstance(block, dict):
                continue
            elif block.get("type") == "tool_result":
                yield from self._result(entry, block, offset, index)
            elif block.get("type") == "text":
                texts.append(as_text(block.get("text")))
            elif block.get("type") in ("image", "document"):
                texts.append(f"[{block.get('type')}]")
        text = "\n".join(t for t in texts if t)
        if text.strip():
            yield self._prompt(entry, text, offset)

    def _prompt(self, entry: dict[str, Any], text: str, offset: int) -> Turn:
        speaker, note = USER, ""
        if "<pasted_content id=" in text:
            text, note = _PASTE.sub("", text), "pasted"
        stripped = text.lstrip()
        origin = entry.get("origin")
        origin_kind = as_text(origin.get("kind")) if isinstance(origin, dict) else ""
        if stripped.startswith("<task-notification>") or origin_kind == "task-notification":
            speaker, note, text = SYSTEM, "task-notification", _notification(text)
        elif stripped.startswith(("<command-name>", "<command-message>")):
            name, args = _tag(text, "command-name"), _tag(text, "command-args")
            text, note = (f"{name} {args}".strip() or text), "command"
        elif stripped.startswith(("<local-command-stdout>", "<local-command-stderr>")):
            found = [_tag(text, "local-command-stdout"), _tag(text, "local-command-stderr")]
            output = _ANSI.sub("", "\n".join(t for t in found if t))
            speaker, note, text = SYSTEM, "command output", output
        elif stripped.startswith("<bash-input>"):
            text, note = f"! {_tag(text, 'bash-input')}", "shell"
        elif stripped.startswith(("<bash-stdout>", "<bash-stderr>")):
            found = [_tag(text, "bash-stdout"), _tag(text, "bash-stderr")]
            speaker, note, text = SYSTEM, "shell output", "\n".join(t for t in found if t)
        elif stripped.startswith("[Request interrupted"):
            speaker, note = SYSTEM, "interrupted"
        elif self.depth or entry.get("isSidechain") is True:
            speaker, note = ASSISTANT, "subagent prompt"  # what the calling agent asked
        elif self.operator is not None and (how := self.operator.which(text)):
            speaker, note = OPERATOR, _join(how, note)
        elif entry.get("promptSource") == "system" or origin_kind not in PERSON_ORIGINS:
            speaker, note = SYSTEM, origin_kind or "system"
        text, cut = _cut(text)
        return self._turn(
            entry, offset, kind=PROMPT, speaker=speaker, text=text, note=_join(note, cut)
        )

    def _result(
        self, entry: dict[str, Any], block: dict[str, Any], offset: int, index: int
    ) -> Iterator[Turn]:
        tool_use_id = as_text(block.get("tool_use_id"))
        result, cut = _cut(_result_text(block.get("content")))
        is_error = block.get("is_error") is True
        call = self._calls.pop(tool_use_id, None) if tool_use_id else None
        if call is not None:
            yield replace(call, result=result, is_error=is_error, note=_join(call.note, cut))
            return
        yield self._turn(
            entry,
            offset,
            kind=TOOL,
            speaker=ASSISTANT,
            text="(the result of a call read before)",
            result=result,
            is_error=is_error,
            tool_use_id=tool_use_id,
            index=index,
            note=_join("result only", cut),
        )

    def _assistant(self, entry: dict[str, Any], content: object, offset: int) -> Iterator[Turn]:
        speaker = SYSTEM if entry.get("isApiErrorMessage") is True else ASSISTANT
        note = "api error" if speaker == SYSTEM else ""
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise ValueError("content is neither text nor blocks")
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = as_text(block.get("text"))
                if text.strip():
                    text, cut = _cut(text)
                    yield self._turn(
                        entry,
                        offset,
                        kind=TEXT,
                        speaker=speaker,
                        text=text,
                        index=index,
                        note=_join(note, cut),
                    )
            elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                yield self._call(entry, block, offset, index)
            elif isinstance(kind, str) and kind.endswith("_tool_result") and "tool_use_id" in block:
                yield from self._result(entry, block, offset, index)

    def _call(self, entry: dict[str, Any], block: dict[str, Any], offset: int, index: int) -> Turn:
        tool = as_text(block.get("name")) or "?"
        tool_input = block.get("input")
        tool_input = tool_input if isinstance(tool_input, dict) else None
        subject = subject_of(tool, tool_input)
        turn = self._turn(
            entry,
            offset,
            kind=TOOL,
            speaker=ASSISTANT,
            text=f"{tool}: {subject}" if subject else tool,
            tool=tool,
            subject=subject,
            tool_input=tool_input,
            tool_use_id=as_text(block.get("id")),
            index=index,
        )
        if turn.tool_use_id:
            self._calls[turn.tool_use_id] = turn
        return turn


_REQUEST_SESSION = b'"requestSessionId":"'


def _forked_from(data: bytes, own: str) -> str:
    """The session a fork was made from: its carried-over answers name the session that
    asked for them (``requestSessionId``), another than the file's own ("": none)."""
    at = data.find(_REQUEST_SESSION)
    while at >= 0:
        start = at + len(_REQUEST_SESSION)
        found = data[start : data.find(b'"', start, start + 80)]
        try:
            session = found.decode("ascii")
        except UnicodeDecodeError:
            session = ""
        if session and session != own and _SESSION.fullmatch(session):
            return session
        at = data.find(_REQUEST_SESSION, start)
        if at > 4 * 1024 * 1024:
            break  # a fork's carried-over turns come first
    return ""


GLUED_TRIES = 4  # places in a line that is not JSON tried as the start of a whole record
_RECORD_STARTS = (b'{"parentUuid":', b'{"type":', b'{"uuid":')


def _record_starts(line: bytes) -> list[int]:
    """Where a record may start inside a line that is not JSON (never at 0), leftmost
    first."""
    found: set[int] = set()
    for head in _RECORD_STARTS:
        at = line.find(head, 1)
        while at > 0 and len(found) < 64:
            found.add(at)
            at = line.find(head, at + 1)
    return sorted(found)


def _reason(error: BaseException) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "invalid UTF-8"
    if isinstance(error, RecursionError):
        return "nested too deep"
    return str(error).split(":")[0] if isinstance(error, json.JSONDecodeError) else str(error)


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
