"""Where the tests find the checkout and their data."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
FIXTURES = TESTS / "fixtures"
PANES = TESTS / "panes"
SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"
SNAP = Path("runeconsole-snap")  # snapshot projects, relative to a temp working directory
