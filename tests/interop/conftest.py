"""A project the harness's scripts have been at: their ``.claude`` copied in, and the
branches their merge-queue entries name committed, so the queue can really merge them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.harness import BRANCHES, copy_harness_state
from tests.support.merge_queue import commit_on, write_talisman


@pytest.fixture
def harness_repo(repo: Path) -> Path:
    """The shared ``repo`` with the harness's branches and its state files beside."""
    for node, branch in BRANCHES.items():
        commit_on(repo, branch, {f"{node}.py": f"# {node}\n"}, message=f"{node}: done")
    copy_harness_state(repo)
    write_talisman(repo, "true")
    return repo


def guardian_processor(root: Path) -> None:
    """Make runeconsole the guardian's merge processor (the talisman key the README names)."""
    write_talisman(root, "true", answer_guardian_signals=True)
