"""How a permission request's state is marked (the Permissions pane's rows), and an
agent's latest decisions as its detail window shows them."""

from __future__ import annotations

from rich.text import Text

from runeconsole.services.claude.permissions.service import (
    ALLOWED,
    ASKED,
    DENIED,
    PENDING,
    PermissionRequest,
)

MARKS = {
    PENDING: ("●", "bold red"),
    ALLOWED: ("✓", "green"),
    DENIED: ("✗", "red"),
    ASKED: ("↷", "dim"),
}


def decisions_text(history: list[PermissionRequest], last: int = 8) -> Text:
    """An agent's latest permission decisions, newest first, with who made each."""
    if not history:
        return Text("")
    text = Text("\nPermission decisions", "bold")
    for request in reversed(history[-last:]):
        symbol, style = MARKS.get(request.state, ("?", "bold red"))
        asked = request.fields.get("asked_at")
        text.append(f"\n{symbol} ", style)
        text.append(f"{asked if isinstance(asked, str) else '-'}  ", "dim")
        text.append(f"{request.tool} {' '.join(request.subject.split())[:80]}")
        text.append(f" · {request.outcome}", "dim")
    if len(history) > last:
        text.append(f"\n… {len(history) - last} earlier (runeconsole permissions history)", "dim")
    return text
