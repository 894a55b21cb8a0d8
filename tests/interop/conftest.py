"""A project the harness's scripts have been at: their ``.claude`` copied in, and the
branches their merge-queue entries name committed, so the queue can really merge them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.harness import BRANCHES, copy_harness_state
from tests.mq_helpers import commit_in_checkout, commit_on, ignore_state, write_talisman


@pytest.fixture
def harness_repo(project: Path) -> Path:
    ignore_state(project)
    commit_in_checkout(project, {"README.md": "shop\n"}, "base")
    for node, branch in BRANCHES.items():
        commit_on(project, branch, {f"{node}.py": f"# {node}\n"}, message=f"{node}: done")
    copy_harness_state(project)
    write_talisman(project, "true")
    return project


def guardian_processor(root: Path) -> None:
    """Make runeconsole the guardian's merge processor (the talisman key the README names)."""
    write_talisman(root, "true", answer_guardian_signals=True)
