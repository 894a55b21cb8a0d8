"""The demo fleet's cast, and a fixed scene of it for screenshots and snapshot tests."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.timeutil import iso_z
from runeconsole.demo.claude_scene import (
    HOOK_AGENT,
    feed_hooks,
    permission_request,
    relay_call,
)
from runeconsole.demo.questions import scene_questions
from runeconsole.demo.review_scene import build_reviews
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.pane_patterns import PaneReading
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.observations import (
    RUNNING,
    AgentObservation,
    MonitorReport,
    ObservationFile,
)
from runeconsole.services.supervision.settings import LOW, MEDIUM

# (role, name, node, tmux session)
CAST: tuple[tuple[str, str, str | None], ...] = (
    ("guardian", "main", None),
    ("orchestrator", "auth", "impl_auth"),
    ("orchestrator", "billing", "impl_billing"),
    ("orchestrator", "search", "impl_search"),
    ("runner", "auth", "impl_auth"),
    ("runner", "billing", "impl_billing"),
    ("runner", "search", "impl_search"),
    ("worker", "parser", "impl_search"),
    ("worker", "schema", "impl_billing"),
    ("worker", "tokens", "impl_auth"),
    ("worker", "docs", "docs"),
    ("worker", "migrate", "impl_billing"),
    HOOK_AGENT,
)
STALE = "worker-migrate"
LATE = "worker-tokens"
CRASHED = "orchestrator-billing"
CRASHED_WORKER = "worker-schema"
TERMINATED = "worker-docs"
UNREADABLE = "worker-ghost"


# key -> (work phase, summary, context left %, urgency, waiting for input, prompt)
SCREENS: dict[str, tuple[str, str, int, str | None, str | None, str | None]] = {
    "orchestrator-auth": ("implementation", "refresh tokens", 12, MEDIUM, None, None),
    "orchestrator-billing": ("testing", "invoice totals", 96, None, None, None),
    "orchestrator-search": ("planning", "index layout", 58, None, "question", "Which index?"),
    "worker-parser": ("implementation", "lexer errors", 41, None, None, None),
    "worker-tokens": ("testing", "token expiry", 23, LOW, None, None),
}


def register_cast(registry: Registry) -> None:
    for role, name, node in CAST:
        session = None if (role, name, node) == HOOK_AGENT else f"rune-{role}-{name}"
        registry.register(role, name, node_id=node, tmux_session=session)


def build_scene(root: Path, clock: ManualClock) -> None:
    """Every state the Agents pane can show, at fixed ages relative to ``clock``.

    Green agents, one late (yellow), one silent past the stale threshold (red), a
    crashed orchestrator re-spawned with its predecessor, a crashed worker, a
    terminated worker and an unreadable (half-written) identity file; and the
    worker questions of ``demo.questions``.
    """
    registry = Registry(Project(root, clock))
    end = clock.now()

    def at(seconds_before_end: float) -> None:
        clock.advance((end - clock.now()).total_seconds() - seconds_before_end)

    at(400)
    register_cast(registry)
    at(150)
    registry.heartbeat(LATE)
    at(110)
    registry.mark_crashed(CRASHED, "tmux session vanished")
    at(80)
    previous = registry.get(CRASHED).get("agent_id")
    registry.register(
        "orchestrator",
        "billing",
        node_id="impl_billing",
        tmux_session="rune-orchestrator-billing-2",
        predecessor_id=previous,
    )
    at(60)
    registry.mark_crashed(CRASHED_WORKER, "process exited 137")
    at(50)
    registry.mark_terminated(TERMINATED)
    for offset, (role, name, _) in enumerate(CAST):
        key = f"{role}-{name}"
        if key not in (STALE, LATE, CRASHED_WORKER, TERMINATED):
            at(30 - 2 * offset)
            registry.heartbeat(key)
    at(0)
    bad = registry.paths.identities / f"{UNREADABLE}.json"
    atomic_write_bytes(bad, b'{"agent_id": "worker-ghost-2026')
    show_screens(registry)
    feed_hooks(registry)
    scene_questions(root, clock)
    relay_call(registry.paths, clock.now())
    permission_request(registry.paths, clock.now())
    build_reviews(root, registry)


def show_screens(registry: Registry) -> None:
    """Hook files and a saved monitor pass for the tmux agents: the phase, context meter and
    waiting marker columns, and the Problems pane's prompts and low context."""
    hooks = HookFiles(registry.project, registry.signals)
    clock = registry.clock
    observed = {}
    for key, (phase, summary, left, urgency, waiting, prompt) in SCREENS.items():
        role, name = key.split("-", 1)
        hooks.create(role, name, node=registry.get(key).get("node_id"), summary=summary)
        hooks.update(key, work_phase=phase)
        record = registry.get(key)
        observed[key] = AgentObservation(
            key,
            record.get("agent_id"),
            record.get("tmux_session"),
            RUNNING,
            iso_z(clock.now()),
            screen=PaneReading(context_left=left, waiting_for_input=waiting, prompt=prompt),
            urgency=urgency,
        )
    report = MonitorReport(iso_z(clock.now()), observations=observed)
    ObservationFile(registry.paths.supervisor / "observations.json").save(report)
