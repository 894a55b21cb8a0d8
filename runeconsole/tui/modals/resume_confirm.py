"""Confirm resuming a suspended task (it counts against the resume gate)."""

from __future__ import annotations

from rich.text import Text

from runeconsole.services.suspension import STALE, ContextRecord
from runeconsole.tui.modals.confirm import ConfirmScreen


class ResumeConfirm(ConfirmScreen):
    def __init__(self, record: ContextRecord, max_resumes: int) -> None:
        detail = Text(
            f"resume_count {record.resume_count} -> {record.resume_count + 1} "
            f"(of {max_resumes}); the injection is printed and copied."
        )
        if record.verdict == STALE:
            detail.append(f"\n\n{record.detail}", "yellow")
        super().__init__(f"Resume task #{record.task_id} of {record.arc}?", detail, "Resume")
        self.record = record
