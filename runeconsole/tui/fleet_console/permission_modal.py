"""The permission window of the fleet console: a Claude Code permission request of any
source, with what is asked (tool, command or path, the model's description). ``y`` allows
it once, ``n`` denies it, ``t`` denies it with a reason the model is told; ``Y`` / ``N``
always allow / deny this exact tool and command or path, for this agent or (``s``) for
all. It returns the verdict; the app sends it to the request's source (``permissions
decide`` there) and says what came back, so a refusal (too late, the source is down) is
shown, never lost."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from runeconsole.services.claude.permission_files import ALLOW, DENY
from runeconsole.services.sources import Verdict
from runeconsole.tui.decision_modal import KeyedDecisionModal
from runeconsole.tui.permission_modal import permission_taps


class FleetPermissionModal(KeyedDecisionModal[Verdict]):
    def __init__(self, source: str, key: str, row: dict[str, Any]) -> None:
        super().__init__()
        self.source = source
        self.key = key
        self.row = row
        self.every_agent = False  # the scope of a rule made with Y / N (s switches it)

    def compose(self) -> ComposeResult:
        row = self.row
        with VerticalScroll(classes="window"):
            title = Text.assemble(("● permission", "bold red"), "  ", (self.source, "bold cyan"))
            title.append(f" · {row.get('agent') or '?'} asks to use {row.get('tool') or '?'}")
            yield Static(title, classes="part")
            yield Static(Text(str(row.get("subject") or "")), classes="part")
            if row.get("description"):
                yield Static(Text(str(row["description"]), style="dim"), classes="part")
            yield Static(self.keys_text(), classes="part keys")
            yield Input(placeholder="why it is denied, enter sends (esc closes)", classes="typed")

    def keys_text(self) -> Text:
        scope = "all agents" if self.every_agent else "this agent"
        keys = Text()
        for key, meaning in (
            ("y / n", "allow once / deny"),
            ("t", "deny, saying why"),
            ("Y / N", f"always allow / deny this exact command, for {scope}"),
            ("s", "rules for all agents / this agent"),
        ):
            keys.append(f"{key:<6}", "bold")
            keys.append(f"{meaning}\n", "dim")
        return keys

    def tap_keys(self) -> list[tuple[str, str]]:
        return [*permission_taps(self.every_agent), *super().tap_keys()]

    def by_key(self, key: str) -> Verdict | None:
        if key in ("y", "n", "Y", "N"):
            behavior = ALLOW if key.lower() == "y" else DENY
            return Verdict(behavior, always=key.isupper(), every_agent=self.every_agent)
        return None

    def other_key(self, key: str) -> bool:
        if key != "s":
            return False
        self.every_agent = not self.every_agent
        self.query_one(".keys", Static).update(self.keys_text())
        self.refresh_taps()
        return True

    def by_text(self, text: str) -> Verdict:
        return Verdict(DENY, text.strip())
