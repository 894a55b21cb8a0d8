"""Which transcript is an agent's, every transcript of a project, and which prompts in
them the operator sent (a ``say``, a review comment) rather than the user typed."""

from __future__ import annotations

import re
from collections.abc import Iterable

OPERATOR_KINDS = ("say", "review")
_SPACE = re.compile(r"\s+")


def normalized(text: str) -> str:
    """A prompt as compared: whitespace runs made one space, ends stripped (a pane's paste
    and Claude Code's record of it may differ in line breaks and trailing spaces)."""
    return _SPACE.sub(" ", text).strip()


class OperatorPrompts:
    """The texts the console sent to one agent, each with how (``say`` or ``review``): a
    prompt in its transcript equal to one of them (normalized) is the operator's."""

    def __init__(self, sent: Iterable[tuple[str, str]] = ()) -> None:
        self._sent: dict[str, str] = {}
        for text, how in sent:
            self.add(text, how)

    def add(self, text: str, how: str) -> None:
        key = normalized(text)
        if key:
            self._sent.setdefault(key, how)

    def which(self, prompt: str) -> str | None:
        """``"say"`` / ``"review"`` when the operator sent ``prompt``; ``None``: not sent here."""
        if not self._sent:
            return None
        return self._sent.get(normalized(prompt))

    def __len__(self) -> int:
        return len(self._sent)
