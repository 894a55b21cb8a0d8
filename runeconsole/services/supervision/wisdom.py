"""The wisdom prompt: what a re-spawned agent is told about the one it continues."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runeconsole.core.errors import RuneError
from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.hook_file_changes import uncommitted_files
from runeconsole.services.hook_files import HookFile

WISDOM_ENV = "RUNECONSOLE_WISDOM_FILE"


def build_wisdom(
    predecessor_id: str, hook: HookFile | None, uncommitted: Sequence[str], worktree: Path
) -> str:
    """The successor's first prompt: that it continues its predecessor's work, then what
    the hook knows."""
    fields = hook.fields if hook and not hook.error else {}
    phase = fields.get("work_phase") or fields.get("phase") or "unknown"
    summary = " ".join(str(fields.get("work_summary") or "nothing recorded").split())
    lines = [
        f"You are a continuation of {predecessor_id}. "
        f"Resume from phase: {phase}, last working on: {summary}",
        "",
        "Resumption instructions:",
        str(fields.get("resumption_instructions") or "(none recorded)"),
        "",
        f"Uncommitted files in {worktree} (left exactly as they were; review, then commit):",
        *([f"- {name}" for name in uncommitted] or ["(none)"]),
    ]
    if hook is not None:
        context = ", ".join(
            f"{label} {fields[name]}"
            for name, label in (
                ("current_node", "node"),
                ("current_bead", "bead"),
                ("tests_status", "tests"),
            )
            if fields.get(name)
        )
        lines += ["", f"Hook: {hook.path}" + (f" ({context})" if context else "")]
    return "\n".join(lines) + "\n"


def write_wisdom(
    paths: ProjectPaths, predecessor_id: str, hook: HookFile | None, worktree: Path
) -> tuple[str, Path]:
    """The prompt and the file that keeps it whole (only its first line is typed into the
    pane); the hook's file list stands in when git cannot list the worktree."""
    try:
        uncommitted = uncommitted_files(worktree)
    except RuneError:
        uncommitted = hook.files_modified if hook else []
    wisdom = build_wisdom(predecessor_id, hook, uncommitted, worktree)
    wisdom_file = paths.supervisor / "wisdom" / f"after-{predecessor_id}.md"
    atomic_write_bytes(paths.inside(wisdom_file), wisdom.encode("utf-8"))
    return wisdom, wisdom_file
