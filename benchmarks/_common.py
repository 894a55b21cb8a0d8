"""Shared by the benchmark scripts: fleets of identity files and percentiles."""

from __future__ import annotations

import json
import statistics
from datetime import UTC, datetime
from pathlib import Path

from runeconsole.adapters import git
from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.timeutil import iso_z


def make_fleet(root: Path, count: int) -> list[str]:
    """``count`` identity files as the harness would write them; returns their keys."""
    git.init_repo(root)
    directory = root / ".claude" / "state" / "identities"
    now = iso_z(datetime.now(UTC))
    keys = []
    for n in range(count):
        key = f"worker-w{n:05d}"
        body = {
            "agent_id": f"{key}-20260226T120000Z",
            "role": "worker",
            "name": f"w{n:05d}",
            "status": "active",
            "created_at": now,
            "last_heartbeat": now,
            "last_seen": now,
            "node_id": f"node{n % 37}",
            "tmux_session": f"rune-{key}",
            "metadata": {},
        }
        atomic_write_bytes(directory / f"{key}.json", json.dumps(body).encode())
        keys.append(key)
    return keys


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(label: str, millis: list[float], goal: str) -> str:
    return (
        f"{label}: n={len(millis)} p50={percentile(millis, 50):.1f} ms "
        f"p95={percentile(millis, 95):.1f} ms max={max(millis):.1f} ms "
        f"mean={statistics.fmean(millis):.1f} ms  (goal {goal})"
    )
