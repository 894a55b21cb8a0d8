"""The permission window of the fleet console: a Claude Code permission request of any
source, with what is asked (tool, command or path, the model's description). ``y`` allows
it once, ``n`` denies it, ``t`` denies it with a reason the model is told. It returns the
verdict; the app sends it to the request's source (``permissions decide`` there) and says
what came back, so a refusal (too late, the source is down) is shown, never lost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from runeconsole.services.claude.permission_files import ALLOW, DENY
from runeconsole.tui.decision_modal import DecisionModal
from runeconsole.tui.reveal import reveal


@dataclass(frozen=True)
class Verdict:
    behavior: str  # allow or deny
    message: str | None = None  # with a deny: the reason the model is told


class FleetPermissionModal(DecisionModal[Verdict]):
    def __init__(self, source: str, key: str, row: dict[str, Any]) -> None:
        super().__init__()
        self.source = source
        self.key = key
        self.row = row

    def compose(self) -> ComposeResult:
        row = self.row
        with VerticalScroll(classes="window"):
            title = Text.assemble(("● permission", "bold red"), "  ", (self.source, "bold cyan"))
            title.append(f" · {row.get('agent') or '?'} asks to use {row.get('tool') or '?'}")
            yield Static(title, classes="part")
            yield Static(Text(str(row.get("subject") or "")), classes="part")
            if row.get("description"):
                yield Static(Text(str(row["description"]), style="dim"), classes="part")
            keys = Text()
            for key, meaning in (("y", "allow once"), ("n", "deny"), ("t", "deny, saying why")):
                keys.append(f"{key}  ", "bold")
                keys.append(f"{meaning}\n", "dim")
            yield Static(keys, classes="part")
            yield Input(placeholder="why it is denied, enter sends (esc closes)", classes="typed")

    def on_key(self, event: events.Key) -> None:
        box = self.query_one(Input)
        if box.display:
            return
        if event.character in ("y", "n"):
            event.stop()
            self.dismiss(Verdict(ALLOW if event.character == "y" else DENY))
        elif event.character == "t":
            event.stop()
            reveal(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(Verdict(DENY, event.value.strip()))
