"""The harness's files under ``data/`` are the shared fixtures, byte for byte."""

from __future__ import annotations

import pytest

from tests.interop.harness import HARNESS, SHARED


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared fixtures absent")
def test_local_copies_match_the_shared_fixtures() -> None:
    written = SHARED / "harness-written"
    shared = {p.relative_to(written): p for p in written.rglob("*") if p.is_file()}
    assert shared
    for relative, path in shared.items():
        assert (HARNESS / relative).read_bytes() == path.read_bytes(), relative
    assert (HARNESS / "README.md").read_bytes() == (SHARED / "README.md").read_bytes()
