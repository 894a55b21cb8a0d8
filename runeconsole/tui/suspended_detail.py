"""Detail of one context file, and the injection a resume produced."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import App

from runeconsole.services.suspension import (
    OK,
    STALE,
    ContextRecord,
    GitView,
    Suspension,
)
from runeconsole.tui.detail_modal import DetailModal
from runeconsole.tui.theme import VERDICT_STYLE


def heading(text: str) -> Text:
    return Text(f"\n{text}", "bold")


def git_comparison(record: ContextRecord, view: GitView | None) -> Text:
    """Each file the context names, against the work tree now (the comparison a resume makes),
    and where a diverged one went when the task's suspend stash holds it."""
    if view is None or view.modified is None:
        return Text(view.note if view else "git state not read yet", "dim")
    text = Text()
    stashed = view.stashed_for(record.task_id)
    named = record.files("files_modified")
    for name in named:
        if name in view.modified:
            text.append("  ✓ ", "green").append(f"{name}  changed in the work tree\n")
        elif name in stashed:
            text.append("  ◐ ", "yellow").append(
                f"{name}  not in the work tree (diverged): held by the task's suspend stash\n"
            )
        else:
            text.append("  ✗ ", "bold red").append(f"{name}  no longer changed (diverged)\n")
    for name in sorted(view.modified - set(named)):
        text.append("  + ", "yellow").append(f"{name}  changed since the suspension\n", "dim")
    for name in record.files("files_pending"):
        text.append("  … ", "dim").append(f"{name}  pending\n", "dim")
    return text or Text("  no files recorded and none changed", "dim")


def injection_preview(suspension: Suspension, record: ContextRecord) -> Text:
    if record.verdict not in (OK, STALE):
        return Text(f"resume refused: {record.detail}", "red")
    return Text(suspension.injection(record, record.resume_count + 1))


class ContextDetail(DetailModal):
    def __init__(self, suspension: Suspension, record: ContextRecord, view: GitView | None) -> None:
        super().__init__()
        self.suspension = suspension
        self.record = record
        self.view = view

    def title_text(self) -> Text:
        record = self.record
        return Text.assemble(
            (record.verdict, VERDICT_STYLE[record.verdict]),
            ("  task #", ""),
            (record.task_id, "bold"),
            (f"  {record.arc}", "dim"),
        )

    def body(self) -> RenderableType:
        record = self.record
        parts: list[RenderableType] = [Text(record.key, "dim")]
        if record.detail:
            parts.append(Text(record.detail, VERDICT_STYLE[record.verdict]))
        if not record.header:
            return Group(*parts)
        parts += [heading("Frontmatter"), Text(record.header.rstrip("\n"))]
        if record.meta:
            parts += [heading("Against git now"), git_comparison(record, self.view)]
            parts += [
                heading("Resume injection (preview)"),
                injection_preview(self.suspension, record),
            ]
        return Group(*parts)


class InjectionScreen(DetailModal):
    """What resume printed (also copied to the clipboard); ``where``: the source it was
    resumed on, in the fleet console."""

    def __init__(self, task_id: str, resume_count: int, injection: str, where: str = "") -> None:
        super().__init__()
        self.task_id, self.resume_count, self.injection = task_id, resume_count, injection
        self.where = where

    def title_text(self) -> Text:
        return Text.assemble(
            ("resumed ", "bold green"),
            (f"task #{self.task_id}", "bold"),
            (f" on {self.where}" if self.where else "", "bold cyan"),
            (f"  resume_count {self.resume_count}  (copied to the clipboard)", "dim"),
        )

    def body(self) -> RenderableType:
        return Text(self.injection)


def show_resumed(
    app: App[Any],
    task_id: str,
    resume_count: int,
    injection: str,
    warnings: list[str],
    where: str = "",
) -> None:
    """A resume's outcome: the injection copied, each warning a notification, the
    injection in its window."""
    app.copy_to_clipboard(injection)
    for warning in warnings:
        app.notify(warning, severity="warning", timeout=10, markup=False)
    app.push_screen(InjectionScreen(task_id, resume_count, injection, where))
