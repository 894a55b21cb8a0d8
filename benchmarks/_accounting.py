"""After a run of the simulated fleet: every event accounted for, every question and
permission request with exactly one outcome (the one its hook printed), every queued
branch landed once, no update lost, no lock timed out; and the hooks' latencies.

``account`` returns the figure lines and the failures (an empty list: all held).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import percentile
from _fleet_load import Fleet, Run
from _workday import Acts

from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.claude.hooks.agent_state import THROTTLE_SECONDS
from runeconsole.services.claude.permissions import files


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def quiet_runs(runs: list[Run]) -> list[Run]:
    """Hook processes that answer nothing: they never wait for anyone but a core."""
    return [r for r in runs if not r.responder]


def latencies(runs: list[Run]) -> list[str]:
    """Their wall time (what Claude Code waits) and their own CPU time."""
    millis = [r.seconds * 1000 for r in quiet_runs(runs)]
    cpu = [r.cpu * 1000 for r in quiet_runs(runs)]
    if not millis:
        return ["no hook ran"]
    return [
        f"hook process (installed command, start -> exit), n={len(millis):,}: "
        f"p50 {percentile(millis, 50):.0f} ms, p95 {percentile(millis, 95):.0f} ms, "
        f"p99 {percentile(millis, 99):.0f} ms, max {max(millis):.0f} ms",
        f"  its own CPU (user + system): p50 {percentile(cpu, 50):.0f} ms, "
        f"p95 {percentile(cpu, 95):.0f} ms (the rest of the wall time: waiting for a core)",
    ]


def account(fleet: Fleet, acts: Acts) -> tuple[list[str], list[str]]:
    offered = f"{fleet.rate:g}"
    achieved = len(fleet.runs) / fleet.driven if fleet.driven else 0.0
    lines: list[str] = [
        f"hook processes a second: offered {offered}, achieved {achieved:.1f} "
        f"(at most {fleet.max_in_flight} at once, those waiting for the operator aside)",
        *latencies(fleet.runs),
    ]
    failures: list[str] = []
    paths = ProjectPaths(fleet.root)
    bad = [r for r in fleet.runs if r.exit_code != 0 or r.stderr]
    loud = [r for r in fleet.runs if not r.responder and r.stdout.strip()]
    events = ", ".join(f"{k} {v:,}" for k, v in Counter(r.event for r in fleet.runs).items())
    lines.append(
        f"events sent: {len(fleet.runs):,} ({events}); exit 0 and silent as expected: "
        f"{len(fleet.runs) - len(bad) - len(loud):,}"
    )
    failures += [f"hook {r.event} of {r.agent}: exit {r.exit_code} {r.stderr[:200]}" for r in bad]
    failures += [f"hook {r.event} of {r.agent} printed {r.stdout[:100]!r}" for r in loud]
    failures += _agents(fleet, lines)
    failures += _log(paths, lines)
    failures += _permissions(fleet, acts, paths, lines)
    failures += _questions(fleet, acts, paths, lines)
    failures += _queue(acts, paths, lines)
    failures += acts.errors
    return lines, failures


def _agents(fleet: Fleet, lines: list[str]) -> list[str]:
    """No lost update: each agent's identity says its last event (a Stop): idle, seen then."""
    failures = []
    right = 0
    for agent in fleet.agents:
        last = agent.sent[-1] if agent.sent else None
        identity = _read(fleet.root / ".claude" / "state" / "identities" / f"{agent.key}.json")
        if last is None or identity is None:
            failures.append(f"{agent.key}: no identity or no event")
            continue
        seen = parse_iso(identity.get("last_seen"))
        # last_seen keeps whole seconds, and an event that changes nothing is not written
        # again within THROTTLE_SECONDS of the last write: it may be this much older.
        slack = timedelta(seconds=1 + THROTTLE_SECONDS)
        sent_at = datetime.fromtimestamp(last.started, UTC) - slack
        claude = identity.get("claude") or {}
        state = (identity.get("activity"), identity.get("waiting_for"), claude.get("last_event"))
        if state == ("idle", None, last.event) and seen is not None and seen >= sent_at:
            right += 1
        else:
            failures.append(f"{agent.key}: {state} last seen {seen}, last event {last.event}")
    lines.append(
        f"agents whose last_seen and activity are their last event's: {right}/{len(fleet.agents)}"
    )
    return failures


def _log(paths: ProjectPaths, lines: list[str]) -> list[str]:
    log = paths.claude_bridge / "hook.log"
    text = log.read_text() if log.exists() else ""
    entries = text.splitlines()
    locks = [line for line in entries if "could not lock" in line]
    lines.append(f"hook.log: {len(entries)} lines, {len(locks)} lock timeouts")
    return [f"hook.log: {line}" for line in entries[:20]]


def _permissions(fleet: Fleet, acts: Acts, paths: ProjectPaths, lines: list[str]) -> list[str]:
    """Each request: one decision, and the hook printed it (nothing for nobody)."""
    failures = []
    by_subject = {}
    for path in files.directory(paths).glob(f"*{files.REQUEST}"):
        fields = _read(path) or {}
        by_subject[fields.get("subject")] = path
    outcomes: Counter[str] = Counter()
    for run in (r for r in fleet.runs if r.event == "PermissionRequest"):
        path = by_subject.get(run.detail["subject"])
        decision = _read(files.decision_path(path)) if path else None
        if decision is None:
            failures.append(f"{run.detail['subject']}: no request or no decision")
            continue
        printed = (
            json.loads(run.stdout)["hookSpecificOutput"]["decision"] if run.stdout.strip() else {}
        )
        behavior = decision.get("behavior")
        outcomes[f"{decision.get('decided_by')}:{behavior}"] += 1
        if printed.get("behavior") != behavior:
            failures.append(f"{path.name}: decided {behavior}, the hook printed {printed}")
        wanted = acts.decided.get(path.name[: -len(files.REQUEST)])
        if wanted is not None and wanted != behavior:
            failures.append(f"{path.name}: the operator decided {wanted}, it says {behavior}")
    left = sum(1 for i in acts.left if i.startswith("perm-"))
    refused = sum(1 for r in acts.refused if r.startswith("perm-"))
    lines.append(
        f"permission requests: {sum(outcomes.values())}, each with one decision: "
        f"{dict(outcomes)}; the operator left {left} to run out; refused to the operator: "
        f"{refused}"
    )
    return failures


def _printed(run: Run) -> dict[str, Any]:
    """The decision a permission hook printed (``{}``: nothing)."""
    if not run.stdout.strip():
        return {}
    return json.loads(run.stdout)["hookSpecificOutput"]["decision"]


def _questions(fleet: Fleet, acts: Acts, paths: ProjectPaths, lines: list[str]) -> list[str]:
    """Each relayed question: answered (and the hook printed the answer) or expired (and it
    printed nothing), never both."""
    failures = []
    outcomes: Counter[str] = Counter()
    for run in (r for r in fleet.runs if r.detail.get("task_id")):
        question = paths.claude_questions / f"{run.detail['task_id']}.q1.question"
        fields = _read(question)
        answer = _read(question.with_suffix(".answer"))
        if fields is None:
            failures.append(f"{question.name}: missing")
            continue
        expired = bool(fields.get("expired"))
        outcomes["answered" if answer else "expired" if expired else "open"] += 1
        if bool(answer) == expired:
            failures.append(f"{question.name}: answered {bool(answer)}, expired {expired}")
        printed = run.stdout.strip()
        if bool(answer) != bool(printed):
            failures.append(f"{question.name}: answer {answer}, the hook printed {printed[:80]!r}")
    lines.append(
        f"questions: {sum(outcomes.values())} ({dict(outcomes)}); answered by the operator "
        f"{len(acts.answered)}, left to run out "
        f"{sum(1 for i in acts.left if not i.startswith('perm-'))}"
    )
    return failures


def _queue(acts: Acts, paths: ProjectPaths, lines: list[str]) -> list[str]:
    queue = _read(paths.merge_queue) or {}
    entries = [e for e in queue.get("entries", []) if isinstance(e, dict)]
    statuses = Counter(e.get("status") for e in entries)
    landed = Counter(e.get("branch") for e in entries if e.get("status") == "completed")
    lines.append(
        f"merge queue: {len(acts.queued)} branches queued, processed {acts.processed} times: "
        f"{dict(statuses)}"
    )
    return [f"{b}: landed {landed[b]} times" for b in acts.queued if landed[b] != 1]
