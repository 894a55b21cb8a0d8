"""Spending booked for an agent of a test root, as its status line (or the hook's
estimate) books it: the ledger, and the ``cost`` its identity carries."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.budgets import booking


def spend(root: Path, key: str, session: str, usd: float, *, when: datetime | None = None,
          estimated: bool = False) -> None:  # fmt: skip
    """``session``'s running total is now ``usd`` (booked ``when``: default now)."""
    path = ProjectPaths(root).identities / f"{key}.json"
    fields = json.loads(path.read_text())
    claude = fields.setdefault("claude", {})
    when = when or datetime.now().astimezone()
    entry = booking.Entry(ProjectPaths(root), key, fields, claude)
    booking.book(entry, session, usd, estimated, when, {})
    path.write_text(json.dumps(fields))
