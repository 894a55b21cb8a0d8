"""Test timeouts from history: with ``test_timeout_seconds: auto`` a test run may take
three times the p95 of the last 20 green runs of its command (never under 60 s), once
five are known; until then the default. Green runs are kept per test command in the
queue's file (``green_runs``), so a slow suite and a quick one each get their own."""

from __future__ import annotations

import shlex
from typing import Any

from runeconsole.services.merge_queue.settings import MergeQueueSettings
from runeconsole.services.merge_queue.stats import percentile

GREEN_RUNS = "green_runs"  # top-level field: {command line: [seconds, ...]}
KEPT, NEEDED, FACTOR, FLOOR = 20, 5, 3.0, 60.0


def command_key(command: list[str]) -> str:
    """A test command as one line (the key its runs are kept under)."""
    return shlex.join(command)


def green_runs(data: dict[str, Any], command: list[str]) -> list[float]:
    runs = data.get(GREEN_RUNS)
    found = runs.get(command_key(command)) if isinstance(runs, dict) else None
    if not isinstance(found, list):
        return []
    return [float(s) for s in found if isinstance(s, int | float) and not isinstance(s, bool)]


def limit_for(settings: MergeQueueSettings, data: dict[str, Any], command: list[str]) -> float:
    """Seconds a run of ``command`` may take before it is stopped."""
    if not settings.test_timeout_auto:
        return settings.test_timeout
    runs = green_runs(data, command)[-KEPT:]
    if len(runs) < NEEDED:
        return settings.test_timeout
    return max(FLOOR, FACTOR * percentile(runs, 95))


def remember_green(data: dict[str, Any], command: list[str], seconds: float) -> None:
    """Add a green run to ``data`` (inside the queue's locked read-modify-write)."""
    runs = data.get(GREEN_RUNS)
    runs = runs if isinstance(runs, dict) else {}
    key = command_key(command)
    kept = [*green_runs(data, command), round(seconds, 3)][-KEPT:]
    runs[key] = kept
    data[GREEN_RUNS] = runs


def describe(settings: MergeQueueSettings, data: dict[str, Any], command: list[str]) -> str:
    """The limit in words: where it comes from."""
    limit = limit_for(settings, data, command)
    if not settings.test_timeout_auto:
        return f"{limit:g}s"
    known = len(green_runs(data, command)[-KEPT:])
    if known < NEEDED:
        return f"{limit:g}s (auto: {known} of {NEEDED} green runs known)"
    return f"{limit:.0f}s (auto: 3 x p95 of the last {known} green runs)"
