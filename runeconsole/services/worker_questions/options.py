"""A question's options, as every writer stores them (a list, a JSON-array string or
``A: x, B: y`` in one string), and as an asker must give them (labelled A, B, … in order)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from runeconsole.core.errors import InvalidInput

MAX_OPTIONS = 9
MAX_TEXT = 8000
LABEL = re.compile(r"^([A-Za-z])\s*[:.)]\s*")
# "A: bcrypt, B: argon2" — Rune stores options as one string; split before each label.
_OPTION_SPLIT = re.compile(r",\s*(?=[A-Za-z]\s*[:.)]\s)")


def option_key(index: int) -> str:
    return chr(ord("A") + index)


@dataclass(frozen=True)
class Option:
    key: str
    text: str

    @property
    def label(self) -> str:
        """The text without its ``A:`` prefix, for display beside the key."""
        match = LABEL.match(self.text)
        return (
            self.text[match.end() :] if match and match.group(1).upper() == self.key else self.text
        )


def _option_texts(fields: dict[str, Any]) -> list[str]:
    exact = fields.get("option_list")
    if isinstance(exact, list) and all(isinstance(item, str) for item in exact):
        return exact
    raw = fields.get("options")
    if isinstance(raw, list):
        return [str(item) for item in raw]
    if not isinstance(raw, str):
        return []
    try:
        decoded = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        decoded = None
    if isinstance(decoded, list):
        return [str(item) for item in decoded]
    text = raw.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return _OPTION_SPLIT.split(text)


def parse_options(fields: dict[str, Any]) -> list[Option]:
    """Options as any writer stores them: a list, a JSON-array string or ``A: x, B: y``."""
    texts = [text.strip() for text in _option_texts(fields) if text and text.strip()]
    return [Option(option_key(index), text) for index, text in enumerate(texts[:26])]


def normalise_options(given: list[str]) -> list[str]:
    """Check the asker's options and label them ``A: …``, ``B: …`` in order."""
    texts = [text.strip() for text in given]
    if len(texts) < 2:
        raise InvalidInput("a question needs at least 2 options (--option 'A: …' --option 'B: …')")
    if len(texts) > MAX_OPTIONS:
        raise InvalidInput(f"a question may have at most {MAX_OPTIONS} options")
    labelled = []
    for index, text in enumerate(texts):
        key = option_key(index)
        match = LABEL.match(text)
        body = text[match.end() :].strip() if match else text
        if match and match.group(1).upper() != key:
            raise InvalidInput(
                f"option {index + 1} is labelled {match.group(1)!r}; label them A, B, C… in order"
            )
        if not body:
            raise InvalidInput(f"option {key} is empty")
        if len(body) > MAX_TEXT:
            raise InvalidInput(f"option {key} is longer than {MAX_TEXT} characters")
        labelled.append(f"{key}: {body}")
    return labelled
