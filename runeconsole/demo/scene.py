"""The demo fleet's cast, and a fixed scene of it for screenshots and snapshot tests."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.files import atomic_write_bytes
from runeconsole.demo.questions import scene_questions
from runeconsole.services.registry import Registry

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
)
STALE = "worker-migrate"
LATE = "worker-tokens"
CRASHED = "orchestrator-billing"
CRASHED_WORKER = "worker-schema"
TERMINATED = "worker-docs"
UNREADABLE = "worker-ghost"


def register_cast(registry: Registry) -> None:
    for role, name, node in CAST:
        registry.register(role, name, node_id=node, tmux_session=f"rune-{role}-{name}")


def build_scene(root: Path, clock: ManualClock) -> None:
    """Every state the Agents pane can show, at fixed ages relative to ``clock``.

    Green agents, one late (yellow), one silent past the stale threshold (red), a
    crashed orchestrator re-spawned with its predecessor, a crashed worker, a
    terminated worker and an unreadable (half-written) identity file; and the
    worker questions of ``demo.questions``.
    """
    registry = Registry(root, clock)
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
    scene_questions(root, clock)
