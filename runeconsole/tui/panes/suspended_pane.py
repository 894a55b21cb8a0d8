"""The Suspended pane: context files with their verdicts, and the arc checkpoints.

``SuspendedPane`` is the list both consoles show: one row per context file (keyed by
its path), the verdict in colour, and ``s`` to resume one whose verdict allows it (each
console says how: here, or on the row's source). ``LocalSuspendedPane`` is the project
console's, fed by the files: ``enter`` shows the frontmatter, the files against git and
the injection resume would produce, ``s`` resumes after a confirmation; below, the arc
checkpoints as a dry-run resume sees them, each phase of PHASE_ORDER as one coloured
mark, demoted phases marked ``!``.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.widgets import Static

from runeconsole.core.files import is_temp_name
from runeconsole.core.timeutil import format_age
from runeconsole.services.checkpoints import CHECKPOINT_FILE, Checkpoints, ResumePlan
from runeconsole.services.suspension import (
    CORRUPT,
    OK,
    STALE,
    UNREADABLE,
    ContextRecord,
    GitView,
    ResumeResult,
    Suspension,
)
from runeconsole.tui.modals.arc_detail import ArcDetail
from runeconsole.tui.modals.resume_confirm import ResumeConfirm
from runeconsole.tui.modals.suspended_detail import ContextDetail, show_resumed
from runeconsole.tui.panes.pane import SUSPENDED, FilePane, Pane
from runeconsole.tui.support.theme import ACTION_STYLE, DEMOTED_MARK, PHASE_MARK, VERDICT_STYLE
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_view import TableView

CONTEXT_COLUMNS = (
    ("verdict", "VERDICT", 10),
    ("task", "TASK", 4),
    ("arc", "ARC", 17),
    ("worker", "WORKER", 12),
    ("age", "AGE", 5),
    ("resumes", "RES", 3),
    ("reason", "REASON", 12),
    ("detail", "DETAIL", None),
)
ARC_COLUMNS = (
    ("id", "CHECKPOINT", 17),
    ("version", "VER", 3),
    ("phases", "PHASES", 26),
    ("next", "RESUME FROM", 17),
    ("state", "STATE", None),
)
AGE = frozenset({"age"})
LEGEND = (
    ("completed", "done"),
    ("pending", "pending"),
    ("in_progress", "running"),
    ("failed", "failed"),
    ("skipped", "skipped"),
    ("absent", "untracked"),
)
ARC_HEADING = Text("Arc checkpoints ", "bold")
for _status, _label in LEGEND:
    ARC_HEADING.append(f" {PHASE_MARK[_status][0]}", PHASE_MARK[_status][1] or "bold")
    ARC_HEADING.append(_label, "dim")
ARC_HEADING.append(f" {DEMOTED_MARK[0]}", DEMOTED_MARK[1]).append("demoted", "dim")


def phase_strip(plan: ResumePlan) -> Text:
    """One mark per PHASE_ORDER phase, then ``+`` and the marks of the phases the order
    does not know (a newer plugin's), so none is hidden."""
    text, unknown = Text(), Text()
    for view in plan.phases():
        if view.retired:
            continue
        glyph, style = DEMOTED_MARK if view.demoted else PHASE_MARK.get(view.status, ("?", "red"))
        (text if view.known else unknown).append(glyph, style)
    if unknown:
        text.append("+", "dim").append_text(unknown)
    return text


def context_row(
    record: ContextRecord, now: datetime, max_resumes: int | None
) -> tuple[object, ...]:
    """The cells of a context file (``max_resumes``: the root's, where it is known)."""
    verdict = Text(record.verdict, VERDICT_STYLE.get(record.verdict, "bold red"))
    if not record.meta:
        detail = Text(f"unreadable: {record.reason}", "red")
        return (verdict, record.task_id, record.arc, "", "-", "", "", detail)
    return (
        verdict,
        record.task_id,
        record.arc,
        record.text("worker"),
        format_age(record.age_at(now)),
        f"{record.resume_count}/{max_resumes}" if max_resumes else str(record.resume_count),
        record.text("timeout_reason"),
        Text(record.detail or record.text("last_action"), "" if record.verdict == OK else "dim"),
    )


def arc_row(plan: ResumePlan) -> tuple[object, ...]:
    state = Text(plan.action.replace("_", " "), ACTION_STYLE[plan.action])
    reason = plan.fresh_start or plan.blocked
    if plan.active_pid is not None:
        state.append(f"  pid {plan.active_pid}", "dim")
    elif reason:
        state.append(f"  {reason}", "dim")
    elif plan.demoted:
        state.append(f"  {len(plan.demoted)} demoted", "magenta")
    return (
        plan.checkpoint_id or plan.path.parent.name,
        f"v{plan.from_version}" if plan.from_version else "?",
        phase_strip(plan) if plan.checkpoint else Text("-", "dim"),
        plan.resume_from or "-",
        state,
    )


class SuspendedPane(Pane[ContextRecord]):
    BINDINGS = [Binding("s", "resume", "Resume")]
    PANE_ID = SUSPENDED
    TITLE = "Suspended"
    HELP_KEYS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("VERDICT", "each context file's integrity: ok, stale (git moved), exhausted, corrupt"),
        ("s", "resume the selected task (asks first; shows and copies the injection)"),
    )
    COLUMNS = CONTEXT_COLUMNS
    SORT = ("arc", "task")
    MOVING = AGE
    max_resumes: int | None = None  # the root's limit, where it is known

    def cells(self, key: str, record: ContextRecord) -> tuple[object, ...]:
        return context_row(record, self.now(), self.max_resumes)

    def search_fields(self, key: str, record: ContextRecord) -> tuple[str, ...]:
        return (key, record.verdict, record.text("worker"))

    def sort_key(self, value: Any) -> Any:
        return tuple(str(cell) for cell in value)

    def moving(self, key: str, record: ContextRecord) -> dict[str, object] | None:
        return {"age": format_age(record.age_at(self.now()))} if record.meta else None

    def figures(self) -> dict[str, int]:
        bad = sum(1 for r in self.records.values() if r.verdict in (CORRUPT, UNREADABLE))
        return {"suspended": len(self.records), "corrupt": bad}

    def action_resume(self) -> None:
        chosen = self.selected()
        if chosen is None:
            self.notify("select a suspended task to resume", severity="warning")
            return
        key, record = chosen
        if record.verdict not in (OK, STALE):
            detail = record.detail or record.verdict
            self.notify(
                f"task #{record.task_id} cannot resume: {detail}", severity="error", markup=False
            )
            return
        self.resume_record(key, record)

    def resume_record(self, key: str, record: ContextRecord) -> None:
        """Resume a task whose verdict allows it (asking first)."""
        raise NotImplementedError


class LocalSuspendedPane(SuspendedPane, FilePane[ContextRecord]):
    DEFAULT_CSS = """
    .pane-heading {
        height: 1;
        padding: 0 1;
        background: $boost;
        text-style: bold;
    }
    """
    WRITES = frozenset({"resume"})
    BINDINGS = [Binding("enter", "details", "Details", show=False)]
    HELP_KEYS = (
        ("enter", "a context file: frontmatter, files against git, the resume injection"),
        ("", "a checkpoint: every phase in PHASE_ORDER, the resume point, warnings"),
        ("s", "resume the selected task (asks first; prints and copies the injection)"),
        ("tab", "move between suspended tasks and arc checkpoints"),
    )

    def __init__(self, suspension: Suspension, checkpoints: Checkpoints, **kwargs: Any) -> None:
        super().__init__(clock=suspension.clock, **kwargs)
        self.suspension = suspension
        self.checkpoints = checkpoints
        self.max_resumes = suspension.settings.max_resume_count
        self.plans: dict[str, ResumePlan] = {}
        self.view: GitView | None = None
        self._dirs: list[Path] = []

    def compose(self) -> ComposeResult:
        yield Static("Suspended tasks", classes="pane-heading")
        yield from super().compose()
        yield Static(ARC_HEADING, classes="pane-heading")
        yield KeyedTable(ARC_COLUMNS, id="arcs-table")

    @property
    def arcs(self) -> KeyedTable:
        return self.query_one("#arcs-table", KeyedTable)

    class Loaded(Message):
        """A full listing, read (git, hashing) in the rescan worker."""

        def __init__(
            self, view: GitView | None, records: list[ContextRecord], plans: list[ResumePlan]
        ) -> None:
            super().__init__()
            self.view, self.records, self.plans = view, records, plans

    class ContextsRead(Message):
        """Context files re-read after their events: the records, and the keys now gone."""

        def __init__(self, records: list[ContextRecord], gone: list[str]) -> None:
            super().__init__()
            self.records, self.gone = records, gone

    class Resumed(Message):
        """A resume was written: its result and the context file as it reads now."""

        def __init__(self, result: ResumeResult, record: ContextRecord) -> None:
            super().__init__()
            self.result, self.record = result, record

    def on_mount(self) -> None:
        self.rescan()

    def load(self) -> tuple[GitView | None, list[ContextRecord], list[ResumePlan]]:
        """Every context file and checkpoint, judged against one look at git; with none,
        git is not asked (the console rescans every few seconds: a ``git diff`` each time
        was most of an idle console's work besides its clocks)."""
        nothing = next(self.suspension.context_files(), None) is None
        if nothing and not self.checkpoints.checkpoint_files():
            return None, [], []
        view = self.suspension.git_view()
        return view, self.suspension.list(view), self.checkpoints.list(view)

    def watch_dirs(self) -> list[Path]:
        """Context dirs and checkpoint dirs that exist now; new ones arrive by rescan."""
        if not self._dirs:
            arc = self.checkpoints.paths.arc
            found = [p.parent for p in self.checkpoints.checkpoint_files()]
            contexts = self.suspension.context_dirs()
            # A new arc's context dir appears in its stamp's context/ dir: watch those too.
            parents = sorted({d.parent for d in contexts})
            self._dirs = [*contexts, *parents, *found, *([arc] if arc.is_dir() else [])]
        return self._dirs

    # -- applying changes --------------------------------------------------------------------

    def upsert_plan(self, plan: ResumePlan) -> None:
        key = str(plan.path)
        self.plans[key] = plan
        self.place(self.arcs, key, (key, plan.action), partial(arc_row, plan))

    def show(
        self, view: GitView | None, records: list[ContextRecord], plans: list[ResumePlan]
    ) -> None:
        """Make both tables match a full listing, by key."""
        self.view = view
        for key in set(self.plans) - {str(p.path) for p in plans}:
            self.plans.pop(key)
            self.arcs.drop(key)
        for plan in plans:
            self.upsert_plan(plan)
        self.sync({record.key: record for record in records})

    def finish(self) -> None:
        super().finish()
        self.arcs.reorder("id")

    def apply_changes(self, paths: set[Path]) -> None:
        """Context files are re-read in place; a checkpoint change re-plans in the background."""
        paths = {p for p in paths if not is_temp_name(p.name)}
        contexts = {p for p in paths if p.suffix == ".md"}
        if contexts and self.view is not None:
            self.read_contexts(contexts, self.view)
        elif contexts:  # the first context file: read with git, as a listing is
            self.rescan()
        if any(p.name == CHECKPOINT_FILE or p.is_dir() for p in paths - contexts):
            self.rescan()

    @background("suspended-read")
    def read_contexts(self, paths: set[Path], view: GitView) -> None:
        records, gone = [], []
        for path in sorted(paths):
            if path.is_file():
                records.append(self.suspension.read(path, view))
            else:
                gone.append(self.suspension.key_for(path))
        if not cancelled():
            self.post_message(self.ContextsRead(records, gone))

    def on_local_suspended_pane_contexts_read(self, message: ContextsRead) -> None:
        message.stop()
        for key in message.gone:
            self.drop(key)
        for record in message.records:
            self.put(record.key, record)
        self.finish()

    def rescan(self) -> None:
        self.read_all()

    @background("suspended-rescan", exclusive=True)
    def read_all(self) -> None:
        loaded = self.load()
        if not cancelled():
            self.post_message(self.Loaded(*loaded))

    def on_local_suspended_pane_loaded(self, message: Loaded) -> None:
        message.stop()
        self.show(message.view, message.records, message.plans)

    def refilter(self) -> None:
        for plan in list(self.plans.values()):
            self.upsert_plan(plan)
        super().refilter()

    # -- interaction -------------------------------------------------------------------------

    def on_table_view_row_selected(self, event: TableView.RowSelected) -> None:
        event.stop()
        if event.table.id == "arcs-table":
            self.show_arc(event.key)
        else:
            self.action_details()

    def show_arc(self, key: str | None) -> None:
        plan = self.plans.get(key or "")
        if plan is not None:
            self.app.push_screen(ArcDetail(plan))

    def action_details(self) -> None:
        if self.arcs.has_focus:
            self.show_arc(self.arcs.cursor_key())
            return
        chosen = self.selected()
        if chosen is not None:
            self.app.push_screen(ContextDetail(self.suspension, chosen[1], self.view))

    def action_resume(self) -> None:
        if self.arcs.has_focus:
            self.notify("select a suspended task to resume", severity="warning")
        else:
            super().action_resume()

    def resume_record(self, key: str, record: ContextRecord) -> None:
        def confirmed(answer: bool | None) -> None:
            if answer:
                self.resume(record)

        max_resumes = self.suspension.settings.max_resume_count
        self.app.push_screen(ResumeConfirm(record, max_resumes), confirmed)

    @background("suspended-resume")
    def resume(self, record: ContextRecord) -> None:
        try:
            result = self.suspension.resume(record.path, view=self.view)
        except Exception as exc:  # any refusal is shown, never fatal to the console
            task = getattr(exc, "task", None)
            told = f"\ntask metadata: {task.describe()}" if task is not None else ""
            self.app.call_from_thread(self.notify, f"{exc}{told}", severity="error", timeout=15)
            return
        fresh = self.suspension.read(result.record.path, self.view)
        if not cancelled():
            self.post_message(self.Resumed(result, fresh))

    def on_local_suspended_pane_resumed(self, message: Resumed) -> None:
        message.stop()
        result = message.result
        self.put(message.record.key, message.record)
        self.finish()
        if result.task is not None:
            severity: SeverityLevel = "information" if result.task.written else "warning"
            self.notify(f"task metadata: {result.task.describe()}", severity=severity, timeout=10)
        record = result.record
        show_resumed(
            self.app, record.task_id, result.resume_count, result.injection, result.warnings
        )
