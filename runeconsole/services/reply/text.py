"""The text ``say`` pastes: line ends made ``\\n`` and every other control character
dropped (an escape in it could end the bracketed paste early and be taken as keys)."""

from __future__ import annotations

import re

from runeconsole.core.errors import InvalidInput

MAX_CHARS = 100_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` as it will be pasted; ``InvalidInput`` when nothing is left or it is huge."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).strip("\n")
    if not text.strip():
        raise InvalidInput("nothing to say: the message is empty")
    if len(text) > MAX_CHARS:
        raise InvalidInput(f"the message is {len(text):,} characters; at most {MAX_CHARS:,}")
    return text
