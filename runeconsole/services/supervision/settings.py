"""Supervisor settings from talisman.yml, and the urgency they give a pane reading."""

from __future__ import annotations

import os
from dataclasses import dataclass

from runeconsole.core.config import Talisman
from runeconsole.core.validate import ID_PATTERN, validate_id
from runeconsole.services.pane_patterns import PaneReading
from runeconsole.services.registry import LivenessSettings

LOW, MEDIUM, HIGH = "low", "medium", "high"
URGENCY_RANK = {None: 0, LOW: 1, MEDIUM: 2, HIGH: 3}
# What each urgency of a low context asks for, in words (the urgency is how pressing the
# agent's context is, not how much of it is left): past the warn, checkpoint, handoff mark.
URGENCY_WORDS = {LOW: "running low", MEDIUM: "time to checkpoint", HIGH: "time to hand off"}
SOCKET_ENV = "RUNECONSOLE_TMUX_SOCKET"


@dataclass(frozen=True)
class SupervisorSettings:
    """``runeconsole.tmux.socket_name`` and ``runeconsole.supervisor.*`` in talisman.yml.

    ``socket_explicit``: the caller named the server (``--tmux-socket``), so an agent
    recorded on another server is refused rather than followed there.
    """

    socket_name: str | None = None
    socket_explicit: bool = False
    monitor_interval: float = 1.0
    warn_at: float = 25.0
    checkpoint_at: float = 15.0
    handoff_at: float = 10.0
    handoff_timeout: float = 60.0
    auto_handoff: bool = False
    auto_respawn: bool = False
    respawn_limit: int = 3
    type_wisdom: bool = True
    touch_every: float = 30.0

    @classmethod
    def from_talisman(
        cls,
        talisman: Talisman,
        *,
        socket_name: str | None = None,
        environ: dict[str, str] | None = None,
    ) -> SupervisorSettings:
        """The socket comes from ``socket_name`` (``--tmux-socket``), else
        ``$RUNECONSOLE_TMUX_SOCKET``, else the talisman, else tmux's default server."""
        environ = dict(os.environ) if environ is None else environ
        section = talisman.section("runeconsole", "supervisor")
        tmux = talisman.section("runeconsole", "tmux")
        configured = tmux.text("socket_name", None)
        tmux.warn_unread()
        if configured and not ID_PATTERN.fullmatch(configured):
            talisman.report(
                f"{tmux.where('socket_name')}: runeconsole.tmux.socket_name is {configured!r}; "
                "allowed: letters, digits, '_' and '-'"
            )
            configured = None
        socket = socket_name or environ.get(SOCKET_ENV) or configured
        if socket:
            validate_id(socket, "tmux socket name")
        warn = section.number("context_warn_percent", 25, minimum=0, maximum=100)
        checkpoint = section.number("context_checkpoint_percent", 15, minimum=0, maximum=100)
        handoff = section.number("context_handoff_percent", 10, minimum=0, maximum=100)
        if not handoff <= checkpoint <= warn:
            where = section.where("context_warn_percent")
            talisman.report(
                f"{where}: runeconsole.supervisor context percentages must satisfy "
                f"handoff ({handoff:g}) <= checkpoint ({checkpoint:g}) <= warn ({warn:g})"
            )
            warn, checkpoint, handoff = 25.0, 15.0, 10.0
        liveness = LivenessSettings.from_talisman(talisman)
        settings = cls(
            socket_name=socket or None,
            socket_explicit=bool(socket_name),
            monitor_interval=section.number("monitor_interval_seconds", 1.0, minimum=0.1),
            warn_at=warn,
            checkpoint_at=checkpoint,
            handoff_at=handoff,
            handoff_timeout=section.number("handoff_timeout_seconds", 60.0, minimum=0),
            auto_handoff=section.boolean("auto_handoff", False),
            auto_respawn=section.boolean("auto_respawn", False),
            respawn_limit=section.integer("respawn_limit", 3, minimum=0),
            type_wisdom=section.boolean("type_wisdom", True),
            touch_every=liveness.heartbeat_interval / 2,
        )
        section.warn_unread()
        return settings

    def urgency(self, reading: PaneReading) -> str | None:
        """low at the warn mark, medium at the checkpoint mark, high at the handoff mark
        or whenever compaction is under way (PreCompact sighted)."""
        if reading.compacting:
            return HIGH
        left = reading.context_left
        if left is None:
            return None
        if left <= self.handoff_at:
            return HIGH
        if left <= self.checkpoint_at:
            return MEDIUM
        return LOW if left <= self.warn_at else None
