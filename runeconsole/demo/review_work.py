"""The demo's work to review: what a fake agent commits before it stops and waits (a
module and its tests, real code with real diffs), and the fix it commits when a review's
comments reach it as a prompt. The fleet plays the reviewer (``review_one``)."""

from __future__ import annotations

from pathlib import Path

from runeconsole.core.errors import RuneError
from runeconsole.demo.merge_queue import commit_files
from runeconsole.services.project import Project
from runeconsole.services.review.service import Reviews

REVIEW_HEADER = "Review comments on your changes"  # how the prompt begins (review/prompt.py)
COMMENTED_LINE = 8  # the line of the module the reviewer comments on (its return)
NO_WORKTREE = "⏺ Could not commit: no worktree of its own"
COMMENT = "Check the version first: a version we do not know should stop here, not later."


def module_code(module: str, *, checked: bool = False) -> str:
    check = (
        "    if version not in STEPS:\n"
        f'        raise ValueError(f"unknown {module} version {{version}}")\n'
        if checked
        else ""
    )
    return (
        f'"""The {module} steps, one per schema version."""\n'
        "\n"
        "STEPS = {1: 'create tables', 2: 'add indexes', 3: 'backfill'}\n"
        "\n"
        "\n"
        "def plan(version: int, target: int) -> list[str]:\n"
        '    """The steps from ``version`` up to ``target``, in order."""\n'
        f"{check}"
        "    return [STEPS[v] for v in range(version + 1, target + 1)]\n"
        "\n"
        "\n"
        "def latest() -> int:\n"
        "    return max(STEPS)\n"
    )


def test_code(module: str) -> str:
    return (
        f"from src.{module} import latest, plan\n"
        "\n"
        "\n"
        "def test_plan_goes_up_to_the_target():\n"
        "    assert plan(1, 3) == ['add indexes', 'backfill']\n"
        "\n"
        "\n"
        "def test_latest():\n"
        "    assert latest() == 3\n"
    )


def deliver(worktree: Path | None, module: str) -> list[str]:
    """Commit the module and its tests, and leave a note uncommitted: the agent's work,
    ready for review. The lines its screen shows."""
    if worktree is None:
        return [NO_WORKTREE]
    files = {f"src/{module}.py": module_code(module), f"tests/test_{module}.py": test_code(module)}
    try:
        commit_files(worktree, files, f"{module}: plan the steps between two versions")
    except RuneError as exc:
        return [f"⏺ Could not commit: {exc.message}"]
    (worktree / "NOTES.md").write_text(f"- {module}: plan() done, latest() done\n")
    return [f'⏺ Bash(git commit -m "{module}: plan the steps")', "  ⎿  2 files changed", ""]


def address(worktree: Path | None, module: str) -> list[str]:
    """The review's comment addressed: the version is checked, in a new commit."""
    if worktree is None:
        return [NO_WORKTREE]
    name = f"src/{module}.py"
    try:
        commit_files(worktree, {name: module_code(module, checked=True)}, f"{module}: check it")
    except RuneError as exc:
        return [f"⏺ Could not commit: {exc.message}"]
    return [f"⏺ Update({name})", "  ⎿  Added 2 lines", "⏺ Committed: the version is checked"]


def review_one(root: Path, key: str, module: str) -> str:
    """What an operator does in the review screen: a comment on a line, then ``S``."""
    reviews = Reviews(Project(root, strict=False))
    reviews.comment(key, COMMENT, file=f"src/{module}.py", line=COMMENTED_LINE)
    return reviews.send(key).prompt
