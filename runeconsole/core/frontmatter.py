"""YAML frontmatter: split a ``---`` fenced header from its body and load it safely.

The fences are whole lines, so a ``---`` inside a value or the body never ends the
header early. Loading uses PyYAML's safe loader only (the C build when libyaml is
present: the same safe constructors, ten times faster on thousands of files).
Every way a header can be bad becomes ``FrontmatterError`` with a reason a person
understands; nothing else escapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

FENCE = "---"
_CLOSING = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


class FrontmatterError(ValueError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Split:
    """``text[:start]`` is the opening fence, ``text[start:end]`` the header, then the body."""

    text: str
    start: int
    end: int
    body_start: int

    @property
    def header(self) -> str:
        return self.text[self.start : self.end]

    @property
    def body(self) -> str:
        return self.text[self.body_start :]


def split(text: str) -> Split:
    first = text.find("\n")
    if first < 0 or text[:first].rstrip("\r \t") != FENCE:
        raise FrontmatterError("no frontmatter: the first line must be '---'")
    closing = _CLOSING.search(text, first + 1)
    if closing is None:
        raise FrontmatterError("frontmatter is not closed by a '---' line")
    body_start = closing.end()
    if text.startswith("\n", body_start):
        body_start += 1
    return Split(text, first + 1, closing.start(), body_start)


# -- the fast path -------------------------------------------------------------------------
# Context files are written in one plain layout (``key: scalar`` lines, ``  - item``
# lists, comments); thousands are listed at once, and PyYAML's Python-side construction
# is most of the cost. ``_plain_mapping`` reads exactly that layout and gives up (None)
# on anything else, which PyYAML then reads: every scalar it accepts resolves the same
# way under PyYAML's safe loader (tested against it), so the result is identical.

_KEY_LINE = re.compile(r"([a-z_][a-z0-9_]*):(?: (.*))?")
_ITEM_LINE = re.compile(r"  - (.*)")
_INT = re.compile(r"0|[1-9][0-9]{0,30}")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")  # never a number, date or indicator
_QUOTED = re.compile(r'"[^"\\]*"')  # no escapes to decode
_STAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")
_RESERVED = frozenset(("yes", "no", "true", "false", "on", "off", "null"))  # bool/null words
# What the YAML reader refuses or treats as a line break: leave those files to it. Written
# as the characters themselves (controls but the newline, C1, the line and paragraph
# separators, surrogates, the BOM, U+FFFE and U+FFFF), not as the complement of what it
# accepts (``[^\n\x20-\x7e...\U0010ffff]``): the same set, compiled in 0.4 ms, not 4.
_AWKWARD = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")

_MISS = object()


def _plain_scalar(text: str) -> Any:
    """The value of one plain or simply quoted scalar, or ``_MISS``."""
    first = text[:1]
    if first == '"':
        return text[1:-1] if _QUOTED.fullmatch(text) else _MISS
    if first.isdigit():
        if _INT.fullmatch(text):
            return int(text)
        match = _STAMP.fullmatch(text)
        if match is None:
            return _MISS
        try:
            year, month, day, hour, minute, second = (int(part) for part in match.groups())
            return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
        except ValueError:
            return _MISS
    if _WORD.fullmatch(text):
        return _MISS if text.lower() in _RESERVED else text
    return [] if text == "[]" else _MISS


def _plain_mapping(header: str) -> dict[str, Any] | None:
    """``header`` read as the plain layout, or ``None`` when it is anything else."""
    if _AWKWARD.search(header):
        return None
    result: dict[str, Any] = {}
    key: str | None = None  # a key whose value is the list that follows
    for line in header.split("\n"):
        if not line or line.startswith("#"):
            if not line and key is not None:
                return None  # a blank line inside a block: leave it to PyYAML
            continue
        item = _ITEM_LINE.fullmatch(line)
        if item is not None:
            value = _plain_scalar(item.group(1))
            if key is None or value is _MISS or isinstance(value, list):
                return None
            result[key].append(value)
            continue
        match = _KEY_LINE.fullmatch(line)
        if match is None or match.group(1) in _RESERVED:
            return None
        if key is not None and not result[key]:
            result[key] = None  # ``key:`` with nothing under it is null
        name, text = match.groups()
        if text is None or text == "":
            result[name], key = [], name
            continue
        key = None
        value = _plain_scalar(text)
        if value is _MISS:
            return None
        result[name] = value
    if key is not None and not result[key]:
        result[key] = None
    return result


def load_mapping(header: str) -> dict[str, Any]:
    """The header as a mapping (``{}`` when empty)."""
    plain = _plain_mapping(header)
    if plain is not None:
        return plain
    import yaml  # 20-40 ms: when a header is not in the writers' plain layout only

    try:
        data = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        raise FrontmatterError(
            f"frontmatter is not valid YAML: {str(exc).splitlines()[0]}"
        ) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # PyYAML's constructors raise these for values like a 13th month.
        raise FrontmatterError(f"frontmatter has a bad value: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(f"frontmatter must be a mapping, found {type(data).__name__}")
    return data


def parse(text: str) -> tuple[Split, dict[str, Any]]:
    parts = split(text)
    return parts, load_mapping(parts.header)


_UNSAFE = frozenset((0x2028, 0x2029, 0xFEFF))


def _printable(code: int) -> bool:
    """Characters YAML readers accept as is (and that never act as a line break)."""
    if 0x20 <= code <= 0x7E:
        return True
    if code in _UNSAFE:
        return False
    return 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000


def quote(value: str) -> str:
    """A double-quoted YAML scalar on one line that any YAML reader reads back as ``value``.

    Control, line-separator and non-printable characters are escaped, so a value can
    never start a new line, end the header, or be refused by a strict YAML parser.
    Lone surrogates (undecodable input) become U+FFFD.
    """
    out = ['"']
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif _printable(code):
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")
        else:
            out.append(f"\\u{code:04x}")
    out.append('"')
    return "".join(out)
