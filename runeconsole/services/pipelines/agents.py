"""Which agent works on which node: the harness names its agents by the node they work
on (identity ``orchestrator-<node>`` / ``runner-<node>`` with ``name`` = the node id,
tmux session ``orch-<node>`` / ``runner-<node>``, worktree ``.claude/worktrees/<node>``,
branch ``worktree-<node>``, merge-queue entries with ``node_id``); ours carry the node in
``metadata.node_id`` when they were started for one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from runeconsole.services.liveness import AgentRecord
from runeconsole.services.merge_queue import QueueEntry


@dataclass(frozen=True)
class NodeWork:
    """What works on one node: its agents (keys, with their colour and status) and its
    merge-queue entries (id and status)."""

    agents: tuple[tuple[str, str, str], ...] = ()  # (key, liveness, status)
    entries: tuple[tuple[str, str], ...] = ()  # (entry id, status)

    def __bool__(self) -> bool:
        return bool(self.agents or self.entries)

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": [{"key": k, "liveness": c, "status": s} for k, c, s in self.agents],
            "queue": [{"entry_id": e, "status": s} for e, s in self.entries],
        }


def node_of_agent(record: AgentRecord) -> set[str]:
    """Every node id an identity names (by any of the harness's conventions)."""
    named: set[str] = set()
    for field in ("node_id", "name"):
        value = record.get(field)
        if isinstance(value, str) and value:
            named.add(value)
    node = record.metadata.get("node_id")
    if isinstance(node, str) and node:
        named.add(node)
    own_key = record.key.rsplit("/", 1)[-1]  # a fleet's key is ``source/key``
    for prefix in ("orchestrator-", "runner-"):
        if own_key.startswith(prefix):
            named.add(own_key[len(prefix) :])
    session = record.get("session_id") or record.get("tmux_session")
    if isinstance(session, str):
        for prefix in ("orch-", "runner-"):
            if session.startswith(prefix):
                named.add(session[len(prefix) :])
    worktree = record.worktree
    if isinstance(worktree, str) and worktree:
        path = PurePath(worktree)
        if path.parent.name == "worktrees":
            named.add(path.name)
    return named


def work_by_node(
    nodes: Iterable[str], agents: Iterable[AgentRecord], entries: Iterable[QueueEntry]
) -> dict[str, NodeWork]:
    """Each of ``nodes`` with what works on it (a node nobody works on is absent)."""
    wanted = set(nodes)
    found_agents: dict[str, list[tuple[str, str, str]]] = {}
    for record in agents:
        if record.error:
            continue
        for node in node_of_agent(record) & wanted:
            found_agents.setdefault(node, []).append((record.key, record.liveness, record.status))
    found_entries: dict[str, list[tuple[str, str]]] = {}
    for entry in entries:
        node = entry.get("node_id")
        if isinstance(node, str) and node in wanted:
            found_entries.setdefault(node, []).append((entry.entry_id, entry.status))
    return {
        node: NodeWork(tuple(found_agents.get(node, ())), tuple(found_entries.get(node, ())))
        for node in wanted
        if node in found_agents or node in found_entries
    }
