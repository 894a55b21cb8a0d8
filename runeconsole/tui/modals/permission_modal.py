"""Decide a permission request by keypress: the agent, the tool, exactly what it would run.

``y`` allows once, ``n`` denies (the model is told the operator denied it), ``t`` denies
with a reason typed in; ``Y`` / ``N`` also keep a rule that always allows / denies this
exact tool and command or path, for this agent, or for all agents after ``s``. ``esc``
closes the window without deciding: the agent keeps waiting, until the countdown ends
and Claude Code asks in its own dialog. A decision made elsewhere first (the CLI, the
timeout) is shown and the window closes; a key pressed a moment too late is refused with
the decision that stands.

The window is the same in both consoles: it is handed a ``decide`` callback, a local
write (``local_verdicts``) or the request's source's own ``permissions decide`` over SSH
(the fleet console), run in a worker; a refusal is said in the window, never lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Key
from textual.message import Message
from textual.widgets import Input, Static

from runeconsole.core.errors import RuneError
from runeconsole.services.claude.permissions.files import ALLOW, DENY
from runeconsole.services.claude.permissions.service import (
    AlreadyDecided,
    PermissionRequest,
    Permissions,
    Verdict,
)
from runeconsole.services.worker_questions import format_left
from runeconsole.tui.modals.decision_modal import DecisionModal
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.reveal import reveal

CLOSE_DELAY_SECONDS = 2.0
SUBJECT_LINES = 12

# Decides the request; the request as decided (``AlreadyDecided`` with the decision that
# stands, another ``RuneError`` when it cannot be decided).
Decide = Callable[[PermissionRequest, Verdict], PermissionRequest]


def local_verdicts(permissions: Permissions) -> Decide:
    """``decide`` for a request of this root: the decision written here."""
    return permissions.apply


def permission_taps(every_agent: bool) -> list[tuple[str, str]]:
    """The buttons of a permission window: its keys, with the scope ``s`` switches to."""
    return [
        ("y", "Allow"),
        ("n", "Deny"),
        ("t", "Deny, saying why"),
        ("Y", "Always allow"),
        ("N", "Always deny"),
        ("s", "Rules: this agent" if every_agent else "Rules: all agents"),
    ]


def request_text(request: PermissionRequest) -> Table | Text:
    """What the agent wants to do: the command or path as it is, what it says it is for,
    the edit in a few words, the rules Claude Code suggests."""
    if request.error is not None:
        return Text(f"unreadable: {request.error}\n{request.path}", "red")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold cyan", no_wrap=True)
    grid.add_column(overflow="fold")
    lines = request.subject.splitlines() or [""]
    shown = "\n".join(lines[:SUBJECT_LINES])
    more = f"\n… {len(lines) - SUBJECT_LINES} more lines" if len(lines) > SUBJECT_LINES else ""
    label = {"Bash": "command"}.get(request.tool, "path" if "/" in request.subject else "input")
    grid.add_row(label, Text.assemble((shown, "bold"), (more, "dim")))
    fields = request.fields
    for name, title in (("description", "why"), ("diff_summary", "change")):
        value = fields.get(name)
        if isinstance(value, str) and value:
            grid.add_row(title, Text(value))
    suggestions = fields.get("suggestions")
    if isinstance(suggestions, list) and suggestions:
        grid.add_row("suggests", Text("\n".join(str(s) for s in suggestions), "dim"))
    rules_error = fields.get("rules_error")
    if isinstance(rules_error, str):
        grid.add_row("rules", Text(f"not applied: {rules_error}", "red"))
    return grid


class PermissionModal(DecisionModal[PermissionRequest | None]):
    DEFAULT_CSS = """
    #permission-modal {
        border: round $error;
    }
    """

    class Decided(Message):
        """The worker's outcome: the request as decided, or why it was not."""

        def __init__(self, decided: PermissionRequest | None, error: Exception | None) -> None:
            super().__init__()
            self.decided = decided
            self.error = error

    def __init__(
        self,
        request: PermissionRequest,
        decide: Decide,
        *,
        now: Callable[[], datetime],
        source: str | None = None,
    ) -> None:
        super().__init__()
        self.request = request
        self.decide, self.now = decide, now
        self.source = source  # the fleet console's: where the request was made
        self.every_agent = False
        self.closing = False
        self.sending = False  # a decision is being written: no second one meanwhile

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="permission-modal", classes="window"):
            yield Static(self._title(), id="permission-title", classes="part")
            yield Static(request_text(self.request), id="permission-body", classes="part")
            yield Static(id="permission-keys", classes="part")
            yield Static(id="permission-countdown", classes="countdown")
            yield Input(
                placeholder="why it is denied; enter sends (esc closes)",
                id="permission-reason",
                classes="typed",
            )
            yield Static(id="permission-note", classes="note")

    def on_mount(self) -> None:
        self._draw_keys()
        self.tick()

    def _title(self) -> Text:
        request = self.request
        title = Text.assemble(("⚠ permission", "bold red"), "  ")
        if self.source:
            title.append(f"{self.source} · ", "bold cyan")
        title.append(request.tool, "bold cyan")
        title.append(f"  from {request.agent}")
        title.append(f"\n{request.id}", "dim")
        return title

    def _draw_keys(self) -> None:
        scope = "all agents" if self.every_agent else "this agent"
        keys = Table.grid(padding=(0, 1))
        for key, what in (
            (" y ", "allow once"),
            (" n ", "deny"),
            (" t ", "deny with a reason the agent reads"),
            (" Y ", f"always allow this exact {self._noun()}, {scope}"),
            (" N ", f"always deny it, {scope}"),
            (
                " s ",
                "make Y / N " + ("for this agent only" if self.every_agent else "for all agents"),
            ),
        ):
            keys.add_row(Text(key, "bold reverse"), Text(what))
        keys.add_row("", Text("esc closes without deciding (the agent keeps waiting)", "dim"))
        self.query_one("#permission-keys", Static).update(keys)
        self.refresh_taps()

    def tap_keys(self) -> list[tuple[str, str]]:
        return [*permission_taps(self.every_agent), *super().tap_keys()]

    def _noun(self) -> str:
        return "command" if self.request.tool == "Bash" else "call"

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        if self.closing:
            return
        expires = self.request.expires
        if expires is None:
            return
        left = (expires - self.now()).total_seconds()
        text = Text.assemble(
            "Claude Code asks in its own dialog in ",
            (format_left(max(left, 0)), "bold red" if left <= 30 else "bold"),
            " unless you decide",
        )
        self.query_one("#permission-countdown", Static).update(text)

    def decided_elsewhere(self, request: PermissionRequest) -> None:
        if not self.sending:  # the worker's outcome says whose decision stands (maybe ours)
            self.close_with(f"Decided elsewhere: {request.outcome} — closing.")

    def close_with(self, note: str) -> None:
        if self.closing:
            return
        self.closing = True
        self.query_one("#permission-reason", Input).display = False
        self._note(note, "bold yellow")
        self.set_timer(CLOSE_DELAY_SECONDS, self._close)

    def _close(self) -> None:
        # Not a lambda: a timer awaits what its callback returns, and awaiting the
        # screen's own dismiss from its handler is an error that ends the console.
        self.dismiss(None)

    def _note(self, text: str, style: str) -> None:
        note = self.query_one("#permission-note", Static)
        note.update(Text(text, style))
        note.display = bool(text)

    # -- deciding --------------------------------------------------------------------------

    def on_key(self, event: Key) -> None:
        if isinstance(self.focused, Input) or not event.is_printable or not event.character:
            return
        event.stop()
        event.prevent_default()
        if self.closing or self.sending:
            return
        key = event.character
        if key in ("y", "n", "Y", "N"):
            behavior = ALLOW if key.lower() == "y" else DENY
            self.send(Verdict(behavior, always=key.isupper(), every_agent=self.every_agent))
        elif key == "t":
            reveal(self.query_one("#permission-reason", Input))
        elif key == "s":
            self.every_agent = not self.every_agent
            self._draw_keys()
        elif key == "q":
            self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip() and not self.sending:
            self.send(Verdict(DENY, event.value.strip()))

    def send(self, verdict: Verdict) -> None:
        """Decide in a worker; ``on_permission_modal_decided`` takes the outcome on."""
        self.sending = True
        self._note("Sending…", "dim")
        self.write_verdict(verdict)

    @background("permission")
    def write_verdict(self, verdict: Verdict) -> None:
        try:
            decided = self.decide(self.request, verdict)
        except Exception as exc:  # every refusal is the window's to show
            if not cancelled():
                self.post_message(self.Decided(None, exc))
            return
        if not cancelled():
            self.post_message(self.Decided(decided, None))

    def on_permission_modal_decided(self, message: Decided) -> None:
        message.stop()
        self.sending = False
        error = message.error
        if isinstance(error, AlreadyDecided):
            self.decided_elsewhere(error.request)
        elif error is not None:
            reason = error.message if isinstance(error, RuneError) else f"{error}"
            self.close_with(f"Not decided: {reason}")
        elif not self.closing:
            self.closing = True
            self.dismiss(message.decided)
