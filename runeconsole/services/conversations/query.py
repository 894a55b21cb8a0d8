"""What a person types into the conversation search, made safe for SQLite's FTS5, and the
hits it finds.

The query language: words (each must appear), ``"phrases"`` (the words in that order),
prefixes (``migra*``), ``OR`` between two terms, and ``-word`` (not that). Every term
reaches FTS5 as a quoted string (an inner ``"`` doubled), so nothing a person types is
ever FTS5 syntax: ``NEAR(``, ``col:``, ``^``, a lone ``*`` or an unbalanced quote are
words or nothing. A query left with no words at all is refused (``InvalidInput``), never
an FTS5 error.

``--since`` takes a moment (``2026-11-29``, ``2026-11-29T05:25Z``) or an age (``90m``,
``6h``, ``2d``, ``1w``).

A ``Hit``'s ``snippet`` is the text around the words found, with each found stretch
between ``MARK_OPEN`` and ``MARK_CLOSE`` as SQLite's ``snippet()`` placed them; ``spans``
cuts it into (text, marked) pieces for whoever draws it (a console styles the marked
ones, the CLI brackets or bolds them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from runeconsole.core.errors import InvalidInput
from runeconsole.core.timeutil import parse_iso

# What snippet() puts around a found word: characters no indexed text holds (they are
# taken out of every text before it is indexed).
MARK_OPEN, MARK_CLOSE, ELLIPSIS = "\x02", "\x03", "…"
MAX_QUERY = 1000  # characters
MAX_TERMS = 32
_TOKEN = re.compile(r'"[^"]*"?|\S+')
_WORDY = re.compile(r"\w")
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True)
class Term:
    text: str  # the words, as typed (no quotes, no *)
    prefix: bool = False
    negated: bool = False

    def fts(self) -> str:
        quoted = '"' + self.text.replace('"', '""') + '"'
        return quoted + " *" if self.prefix else quoted


def parse_query(query: str) -> list[list[Term]]:
    """The query as groups joined by AND; the terms of a group joined by OR. Raises
    ``InvalidInput`` when no word is left to look for."""
    if len(query) > MAX_QUERY:
        raise InvalidInput(f"the query is longer than {MAX_QUERY} characters")
    groups: list[list[Term]] = []
    joining = False
    count = 0
    for token in _TOKEN.findall(query.replace("\0", " ")):
        if token == "OR":
            joining = bool(groups)
            continue
        term = _term(token)
        if term is None:
            continue
        count += 1
        if count > MAX_TERMS:
            raise InvalidInput(f"the query has more than {MAX_TERMS} terms")
        if joining and not term.negated and not groups[-1][0].negated:
            groups[-1].append(term)
        else:
            groups.append([term])
        joining = False
    if not any(not group[0].negated for group in groups):
        raise InvalidInput(
            f'nothing to search for in {query!r}: give a word, a "phrase" or a prefix*'
        )
    return groups


def _term(token: str) -> Term | None:
    negated = False
    if token.startswith("-") and len(token) > 1:
        negated, token = True, token[1:]
    if token.startswith('"'):
        text, prefix = token.strip('"'), False
        if token.endswith('"*'):
            text, prefix = token[1:-2], True
    else:
        prefix = token.endswith("*")
        text = token.rstrip("*")
    text = " ".join(text.split())
    if not _WORDY.search(text):
        return None  # punctuation alone: FTS5 would find no token in it
    return Term(text, prefix=prefix, negated=negated)


def fts_expression(query: str) -> str:
    """The FTS5 MATCH expression for ``query``: quoted terms only (see the module)."""
    groups = parse_query(query)
    positive = [g for g in groups if not g[0].negated]
    negative = [g[0] for g in groups if g[0].negated]
    parts = [_group(g) for g in positive]
    expression = " AND ".join(parts)
    for term in negative:
        expression = f"({expression}) NOT {term.fts()}"
    return expression


def _group(terms: list[Term]) -> str:
    if len(terms) == 1:
        return terms[0].fts()
    return "(" + " OR ".join(term.fts() for term in terms) + ")"


def parse_since(value: str, now: datetime) -> datetime:
    """``--since``: an age before ``now`` (``90m``, ``6h``, ``2d``, ``1w``) or a moment."""
    age = _AGE.match(value)
    if age:
        seconds = float(age.group(1)) * _UNITS[age.group(2)]
        try:
            return now - timedelta(seconds=seconds)
        except OverflowError:
            raise InvalidInput(f"--since {value}: too long ago") from None
    moment = parse_iso(value)
    if moment is None:
        raise InvalidInput(
            f"--since {value!r}: give a moment (2026-11-29, 2026-11-29T05:25Z) "
            "or an age (90m, 6h, 2d, 1w)"
        )
    return moment


def clean_text(text: str) -> str:
    """``text`` as indexed: without the characters that mark found words."""
    if MARK_OPEN in text or MARK_CLOSE in text:
        return text.replace(MARK_OPEN, " ").replace(MARK_CLOSE, " ")
    return text


@dataclass(frozen=True)
class Hit:
    """One turn a search found. ``key`` is the agent's key ("" when no agent is known
    for the session); ``offset`` is where the turn's record starts in ``path`` (the
    conversation opens there); ``snippet`` holds the found words between MARK_OPEN and
    MARK_CLOSE; ``source`` names the fleet source it came from ("" for this root)."""

    key: str
    role: str
    session_id: str
    path: str
    offset: int
    uuid: str
    at: datetime | None
    speaker: str
    kind: str
    tool: str
    snippet: str
    depth: int = 0  # 1: a subagent's turn (``path`` is its own file)
    source: str = ""

    @property
    def agent(self) -> str:
        return self.key

    def spans(self) -> list[tuple[str, bool]]:
        """The snippet as pieces of (text, found), in order; newlines made spaces."""
        pieces: list[tuple[str, bool]] = []
        marked = False
        text = " ".join(self.snippet.split())
        for part in re.split(f"([{MARK_OPEN}{MARK_CLOSE}])", text):
            if part == MARK_OPEN:
                marked = True
            elif part == MARK_CLOSE:
                marked = False
            elif part:
                pieces.append((part, marked))
        return pieces

    def marked(self, open_mark: str = "[", close_mark: str = "]") -> str:
        """The snippet on one line, each found stretch between ``open_mark`` and
        ``close_mark``."""
        return "".join(f"{open_mark}{t}{close_mark}" if m else t for t, m in self.spans())

    def plain(self) -> str:
        return "".join(text for text, _ in self.spans())

    def to_json(self) -> dict[str, Any]:
        text, marks, at = "", [], 0
        for piece, found in self.spans():
            if found:
                marks.append([at, at + len(piece)])
            text += piece
            at += len(piece)
        return {
            "source": self.source,
            "agent": self.key,
            "role": self.role,
            "session_id": self.session_id,
            "path": self.path,
            "offset": self.offset,
            "uuid": self.uuid,
            "at": self.at.isoformat() if self.at else None,
            "speaker": self.speaker,
            "kind": self.kind,
            "tool": self.tool,
            "depth": self.depth,
            "snippet": text,
            "marks": marks,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "") -> Hit:
        """A hit as ``to_json`` wrote it (a remote source's ``search --json``)."""
        text = str(data.get("snippet") or "")
        snippet, last = "", 0
        for mark in data.get("marks") or []:
            try:
                start, end = int(mark[0]), int(mark[1])
            except (TypeError, ValueError, IndexError):
                continue
            if last <= start <= end <= len(text):
                snippet += text[last:start] + MARK_OPEN + text[start:end] + MARK_CLOSE
                last = end
        snippet += text[last:]
        at = parse_iso(data.get("at"))
        return cls(
            key=str(data.get("agent") or ""),
            role=str(data.get("role") or ""),
            session_id=str(data.get("session_id") or ""),
            path=str(data.get("path") or ""),
            offset=_int(data.get("offset")),
            uuid=str(data.get("uuid") or ""),
            at=at,
            speaker=str(data.get("speaker") or ""),
            kind=str(data.get("kind") or ""),
            tool=str(data.get("tool") or ""),
            snippet=snippet,
            depth=_int(data.get("depth")),
            source=source or str(data.get("source") or ""),
        )


def _int(value: object) -> int:
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            return max(0, int(value))
        except (ValueError, OverflowError):
            return 0
    return 0


def epoch_ms(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def from_epoch_ms(value: int | None) -> datetime | None:
    if value is None or value <= 0:
        return None
    return datetime.fromtimestamp(value / 1000, UTC)
