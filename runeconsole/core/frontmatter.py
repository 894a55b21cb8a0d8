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
from typing import Any

import yaml

FENCE = "---"
_CLOSING = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


def load_mapping(header: str) -> dict[str, Any]:
    """The header as a mapping (``{}`` when empty)."""
    try:
        data = yaml.load(header, Loader=_SAFE_LOADER)
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
