"""Suspended-task context files: ``tmp/work/{stamp}/context/{arc-id}/{task-id}.md``.

A worker about to time out writes YAML frontmatter and a free-form body; ``resume``
verifies the seal, applies the resume gate, compares the files with git and hands the
next worker the body inside a guarded prompt. One job a module: ``context_file`` (the
format and the seal), ``injection`` (the prompt and its guard), ``git_view`` (the work
tree and the suspend stashes), ``records`` (what is read and returned), ``settings``,
and ``service.Suspension``, which joins them. The names callers use are re-exported here.
"""

from runeconsole.services.suspension.context_file import render, seal, with_resume_count
from runeconsole.services.suspension.git_view import GitView
from runeconsole.services.suspension.injection import frame_start
from runeconsole.services.suspension.records import (
    CORRUPT,
    EXHAUSTED,
    OK,
    REASONS,
    STALE,
    UNREADABLE,
    VERDICTS,
    ContextRecord,
    ResumeRefused,
    ResumeResult,
    SuspendResult,
)
from runeconsole.services.suspension.service import Suspension
from runeconsole.services.suspension.settings import SuspensionSettings

__all__ = [
    "CORRUPT",
    "EXHAUSTED",
    "OK",
    "REASONS",
    "STALE",
    "UNREADABLE",
    "VERDICTS",
    "ContextRecord",
    "GitView",
    "ResumeRefused",
    "ResumeResult",
    "SuspendResult",
    "Suspension",
    "SuspensionSettings",
    "frame_start",
    "render",
    "seal",
    "with_resume_count",
]
