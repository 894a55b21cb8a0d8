"""The Permissions pane: Claude Code's permission requests waiting for the operator, the
latest decisions with who made them, and the standing rules.

Requests waiting for a decision come first (oldest first, a countdown to the moment
Claude Code asks in its own dialog); below them, the latest decisions (allowed, denied,
fell through to Claude Code) with who decided. ``PermissionsPane`` is that list and the
permission window on enter or ``a``, in both consoles (each hands the window its
``decide``). ``LocalPermissionsPane`` is the project console's: rows follow the files (a
request or decision file appearing, the rules file replaced), a new request rings the
bell and says ``a`` decides it from any pane, and below the requests are the rules
(``x`` takes the selected one out).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.permissions import rules as permission_rules
from runeconsole.services.claude.permissions.rules import Rule
from runeconsole.services.claude.permissions.service import (
    RECENT,
    PermissionRequest,
    Permissions,
)
from runeconsole.services.worker_questions import format_left
from runeconsole.tui.cells.permission_cells import MARKS
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.permission_modal import Decide, PermissionModal, local_verdicts
from runeconsole.tui.panes.pane import PERMISSIONS, FilePane, Pane
from runeconsole.tui.support.workers import background
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.steady_static import SteadyStatic

COLUMNS = (
    ("mark", " ", 1),
    ("agent", "AGENT", 20),
    ("tool", "TOOL", 6),
    ("age", "AGE", 5),
    ("left", "WAITS", 6),
    ("what", "COMMAND / PATH · OUTCOME", None),
)
RULE_COLUMNS = (
    ("rule", "RULE", 5),
    ("tool", "TOOL", 6),
    ("agent", "AGENT", 20),
    ("subject", "COMMAND / PATH", None),
)
EMPTY = "No permission requests. Claude Code's permission prompts appear here (claude install)."


class Mark(Text):
    """The state mark; carries the row's place (open first, then newest decided)."""

    def __init__(self, request: PermissionRequest) -> None:
        symbol, style = MARKS.get(request.state, ("?", "bold red"))
        super().__init__(symbol, style=style)
        asked = request.sort_key()[0]
        self.order = (0, asked, request.id) if request.open else (1, -asked, request.id)


def waits(expires: datetime | None, now: datetime) -> Text:
    """The time an open request has left (``expires`` None: not waiting)."""
    if expires is None:
        return Text("-", "dim")
    left = (expires - now).total_seconds()
    return Text(format_left(max(left, 0)), "bold red" if left <= 30 else "")


def what_text(subject: str, outcome: str | None, error: str | None) -> Text:
    """The command or path asked for, and once decided its outcome."""
    if error is not None:
        return Text(f"unreadable: {error}", "red")
    what = Text(" ".join(subject.split())[:400])
    if outcome is not None:
        what.append(f" · {outcome}", "dim")
    return what


def row_values(request: PermissionRequest, now: datetime) -> tuple[object, ...]:
    asked = request.asked
    return (
        Mark(request),
        Text(request.agent),
        Text(request.tool),
        format_age((now - asked).total_seconds()) if asked else "-",
        waits(request.expires if request.open else None, now),
        what_text(request.subject, None if request.open else request.outcome, request.error),
    )


def rule_values(rule: Rule) -> tuple[object, ...]:
    style = "green" if rule.behavior == files.ALLOW else "bold red"
    return (Text(rule.behavior, style), Text(rule.tool), Text(rule.scope), Text(rule.subject))


class PermissionsPane(Pane[PermissionRequest]):
    ENTER = "decide"
    BINDINGS = [
        Binding("a", "decide", "Decide"),
        Binding("enter", "decide", "Decide", show=False),
    ]
    PANE_ID = PERMISSIONS
    TITLE = "Permissions"
    SHORT_TITLE = "Perms"
    HELP_KEYS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("enter / a", "decide the selected request (a in any other pane: the oldest waiting)"),
        ("y / n / t", "in the window: allow once, deny, deny with a reason"),
        ("Y / N, s", "in the window: always allow / deny it; s: for all agents or this one"),
    )
    COLUMNS = COLUMNS
    SORT = ("mark",)
    MOVING = frozenset({"left"})
    EMPTY = EMPTY
    SOURCE_AT = 1

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.modal: PermissionModal | None = None
        self.modal_key: str | None = None
        self.older: set[str] = set()  # decided before the latest ``RECENT``: not shown

    def cells(self, key: str, record: PermissionRequest) -> tuple[object, ...]:
        return row_values(record, self.now())

    def search_fields(self, key: str, record: PermissionRequest) -> tuple[str, ...]:
        return (record.agent, record.tool, record.subject)

    def hidden(self, key: str, record: PermissionRequest) -> bool:
        return key in self.older

    def moving(self, key: str, record: PermissionRequest) -> dict[str, object] | None:
        return {"left": waits(record.expires, self.now())} if record.open else None

    def figures(self) -> dict[str, int]:
        # Only while someone waits: the status bar keeps its room in an 80-column pane.
        waiting = sum(1 for request in self.records.values() if request.open)
        return {"permissions": waiting} if waiting else {}

    def finish(self) -> None:
        """Show the open requests and the latest decisions only."""
        decided = [k for k, r in self.records.items() if not r.open]
        decided.sort(key=lambda k: self.records[k].sort_key(), reverse=True)
        older = set(decided[RECENT:])
        moved, self.older = older ^ self.older, older
        for key in moved:
            self.redraw(key)
        super().finish()

    # -- deciding --------------------------------------------------------------------------

    def deciding(self, key: str) -> Decide:
        """``decide`` for the permission window of the request at ``key``."""
        raise NotImplementedError

    def action_decide(self) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        key, request = chosen
        if request.open:
            self.open_modal(request, key)
        else:
            self.notify(f"{request.id}: {request.outcome}", title="Decided", markup=False)

    def oldest(self) -> tuple[str, PermissionRequest] | None:
        """The oldest request waiting (for the app's ``a``)."""
        waiting = [(k, r) for k, r in self.records.items() if r.open]
        return min(waiting, key=lambda item: item[1].sort_key()) if waiting else None

    def open_modal(self, request: PermissionRequest, key: str | None = None) -> None:
        if self.modal is not None:
            return
        key = key or request.id
        source = self.sources.of(key) if self.sources is not None else None
        self.modal_key = key
        self.modal = PermissionModal(request, self.deciding(key), now=self.now, source=source)
        self.app.push_screen(self.modal, self._modal_closed)

    def _modal_closed(self, decided: PermissionRequest | None) -> None:
        self.modal = None
        if decided is not None:
            self.notify(
                f"{decided.agent}: {decided.tool} {decided.outcome}",
                title="Permission",
                markup=False,
            )
            self.decided(decided)

    def decided(self, request: PermissionRequest) -> None:
        """The window decided ``request`` (the project console shows it at once)."""

    def tick(self) -> None:
        super().tick()
        if self.modal is not None:
            self.modal.tick()


class LocalPermissionsPane(PermissionsPane, FilePane[PermissionRequest]):
    DEFAULT_CSS = """
    #permissions-table {
        height: 1fr;
    }
    #permission-rules-title {
        height: 1;
        padding: 0 1;
    }
    #permission-rules {
        height: auto;
        max-height: 7;
    }
    """
    WRITES = frozenset({"decide", "remove_rule"})
    BINDINGS = [Binding("x", "remove_rule", "Remove rule")]
    HELP_KEYS = (
        *PermissionsPane.HELP_KEYS,
        ("tab, x", "move to the rules; take the selected rule out"),
    )

    def __init__(self, permissions: Permissions, **kwargs: Any) -> None:
        super().__init__(clock=permissions.clock, **kwargs)
        self.permissions = permissions
        self.rules: list[Rule] = []
        self._loaded = False

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield SteadyStatic(Text("Rules", "bold"), id="permission-rules-title")
        yield KeyedTable(RULE_COLUMNS, id="permission-rules")

    @property
    def rules_table(self) -> KeyedTable:
        return self.query_one("#permission-rules", KeyedTable)

    def on_mount(self) -> None:
        self.load(self.permissions.shown())
        self.load_rules()
        self._loaded = True

    def watch_dirs(self) -> list[Path]:
        """The signals directory (where the requests' directory appears), that directory
        once it exists, and the state directory (the rules file)."""
        paths, where = self.permissions.paths, self.permissions.directory
        return [paths.question_signals, paths.state, *([where] if where.is_dir() else [])]

    def deciding(self, key: str) -> Decide:
        return local_verdicts(self.permissions)

    # -- applying changes --------------------------------------------------------------------

    def upsert(self, request: PermissionRequest) -> None:
        known = self.records.get(request.id)
        self.put(request.id, request)
        if self._loaded and request.open and known is None:
            self._announce(request)
        if self.modal is not None and self.modal.request.id == request.id and not request.open:
            self.modal.decided_elsewhere(request)

    def _announce(self, request: PermissionRequest) -> None:
        self.app.bell()
        what = " ".join(request.subject.split())[:120]
        self.notify(
            f"{request.agent} asks to run {request.tool}: {what} — press a to decide",
            title="Permission",
            severity="warning",
            timeout=8,
            markup=False,
        )
        self.post_message(
            self.OperatorWanted(
                request.agent, f"{request.agent} needs your permission", f"{request.tool}: {what}"
            )
        )

    def load(self, requests: list[PermissionRequest]) -> None:
        """Exactly these requests (a full listing)."""
        fresh = {r.id for r in requests}
        for key in [k for k in self.records if k not in fresh]:
            self.drop(key)
        for request in requests:
            self.upsert(request)
        self.finish()

    def load_rules(self) -> None:
        title = self.query_one("#permission-rules-title", Static)
        try:
            self.rules = self.permissions.rules()
        except RuneError as exc:
            self.rules = []
            title.update(Text(f"Rules: {exc.message}", "bold red"))
        else:
            count = (
                f" ({len(self.rules)})" if self.rules else ": none (Y / N in a request adds one)"
            )
            title.update(Text.assemble(("Rules", "bold"), (count, "dim")))
        self.rules_table.sync([(rule.id, rule_values(rule)) for rule in self.rules])

    def read_directory(self, directory: Path) -> None:
        self.load(self.permissions.shown())

    def apply_changes(self, paths: set[Path]) -> None:
        where = self.permissions.directory
        changed: set[str] = set()
        for path in paths:
            if path == where:  # the directory appeared: follow it (then read_directory)
                self.follow(path)
            elif path.name == permission_rules.FILE_NAME:
                self.load_rules()
            elif path.parent == where and path.suffix in (files.REQUEST, files.DECISION):
                changed.add(path.name[: -len(path.suffix)])
        for request_id in changed:
            if files.valid_id(request_id):
                path = where / f"{request_id}{files.REQUEST}"
                if path.exists() or path.is_symlink():
                    self.upsert(PermissionRequest.read(path))
                else:
                    self.drop(request_id)
        if changed:
            self.finish()

    def rescan(self) -> None:
        self.read_all()

    @background("permissions-rescan", exclusive=True)
    def read_all(self) -> None:
        requests = self.permissions.shown()
        try:  # requests whose agent stopped waiting: recorded as decided by nobody
            if self.permissions.expire_orphans(requests):
                requests = self.permissions.shown()
        except RuneError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="warning", markup=False)
        self.app.call_from_thread(self.load, requests)
        self.app.call_from_thread(self.load_rules)

    def decided(self, request: PermissionRequest) -> None:
        self.upsert(request)
        self.load_rules()
        self.finish()

    # -- the rules -------------------------------------------------------------------------

    def action_remove_rule(self) -> None:
        key = self.rules_table.cursor_key() if self.rules_table.has_focus else None
        rule = next((r for r in self.rules if r.id == key), None)
        if rule is None:
            self.notify("Select a rule first (tab moves to the rules).", timeout=3)
            return
        detail = Text(f"{rule.behavior} {rule.tool} {rule.subject!r} for {rule.scope}")

        def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.permissions.remove_rule(rule.id)
            except RuneError as exc:
                self.notify(exc.message, severity="error", markup=False)
            self.load_rules()

        self.app.push_screen(
            ConfirmScreen(f"Take out rule {rule.id}?", detail, "Remove"), confirmed
        )
