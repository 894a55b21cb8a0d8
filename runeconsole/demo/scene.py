"""The demo fleet's cast, and a fixed scene of it for screenshots and snapshot tests."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.files import atomic_write_bytes
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
CRASHED = "orchestrator-billing"
TERMINATED = "worker-docs"
UNREADABLE = "worker-ghost"


def register_cast(registry: Registry) -> None:
    for role, name, node in CAST:
        registry.register(role, name, node_id=node, tmux_session=f"rune-{role}-{name}")


def build_scene(root: Path, clock: ManualClock) -> None:
    """Every state the Agents pane can show, at fixed times relative to ``clock``."""
    registry = Registry(root, clock)
    start = clock.now()
    clock.advance(-400)
    register_cast(registry)
    clock.advance(260)
    registry.heartbeat(STALE)
    clock.advance(30)
    registry.mark_crashed(CRASHED, "tmux session vanished")
    clock.advance(50)
    registry.mark_terminated(TERMINATED)
    clock.advance(30)
    registry.register(
        "orchestrator",
        "billing",
        node_id="impl_billing",
        tmux_session="rune-orchestrator-billing-2",
        predecessor_id=registry.chain(CRASHED)[0].get("agent_id"),
    )
    for role, name, _ in CAST:
        key = f"{role}-{name}"
        if key not in (STALE, TERMINATED):
            registry.heartbeat(key)
            clock.advance(1)
    clock.advance((start - clock.now()) / timedelta(seconds=1))
    bad = registry.paths.identities / f"{UNREADABLE}.json"
    atomic_write_bytes(bad, b'{"agent_id": "worker-ghost-2026', mode=0o644)
