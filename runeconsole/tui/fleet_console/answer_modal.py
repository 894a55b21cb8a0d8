"""The answer window of the fleet console: a question row of any source, its options by
letter (``A``, ``B``… or ``1``, ``2``…), ``t`` to answer in your own words. It returns the
choice; the app sends it to the question's source (``question answer`` there) and says
what came back, so a refusal (the source is down) is shown, never lost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from runeconsole.tui.decision_modal import KeyedDecisionModal


@dataclass(frozen=True)
class Choice:
    option: str | None = None  # the option's letter
    text: str | None = None  # an answer in the operator's words


def option_letter(index: int) -> str:
    return chr(ord("A") + index)


class FleetAnswerModal(KeyedDecisionModal[Choice]):
    def __init__(self, source: str, key: str, row: dict[str, Any]) -> None:
        super().__init__()
        self.source = source
        self.key = key
        self.row = row
        self.options = [str(o) for o in row.get("options") or []]

    def compose(self) -> ComposeResult:
        blocking = self.row.get("urgency") == "blocking"
        with VerticalScroll(classes="window"):
            mark = ("● blocking", "bold red") if blocking else ("○ non-blocking", "yellow")
            title = Text.assemble(mark, "  ", (self.source, "bold cyan"), " · ")
            title.append(f"{self.row.get('task_id')}  from {self.row.get('worker_name') or '?'}")
            yield Static(title, classes="part")
            yield Static(Text(str(self.row.get("question") or "")), classes="part")
            if self.row.get("context"):
                yield Static(Text(str(self.row["context"]), style="dim"), classes="part")
            lines = Text()
            for index, option in enumerate(self.options):
                letter = option_letter(index)
                if not option.startswith(f"{letter}:"):  # Rune's options carry their letter
                    lines.append(f"{letter}: ", "bold")
                lines.append(f"{option}\n")
            lines.append("t  ", "bold")
            lines.append("answer in your own words", "dim")
            yield Static(lines, classes="part")
            yield Input(placeholder="your answer, enter sends (esc closes)", classes="typed")

    def tap_keys(self) -> list[tuple[str, str]]:
        letters = [(option_letter(i), option_letter(i)) for i in range(len(self.options))]
        return [*letters, ("t", "Type an answer"), *super().tap_keys()]

    def by_key(self, key: str) -> Choice | None:
        index = None
        if len(key) == 1 and key.isalpha() and key.isupper():
            index = ord(key) - ord("A")
        elif len(key) == 1 and key.isdigit() and key != "0":
            index = int(key) - 1
        if index is not None and 0 <= index < len(self.options):
            return Choice(option=option_letter(index))
        return None

    def by_text(self, text: str) -> Choice:
        return Choice(text=text)
