"""Control characters in text other processes wrote (agent names, questions, a remote
source's JSON, a context file's body): never passed to a terminal, where an escape
sequence would be acted on (moving the cursor, clearing the screen, setting the title)."""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with each control character shown as U+FFFD (the CLI's plain output)."""
    return CONTROL.sub("\N{REPLACEMENT CHARACTER}", text)
