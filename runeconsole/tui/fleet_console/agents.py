"""The fleet console's agents: what the Agents pane asks of a row is done on the row's
source (``FleetFeed.actions``: in-process for a root of this machine, the same CLI
commands over SSH for a host), and its detail is read from what the source sends, and,
for a root of this machine, from its files as the project console reads them."""

from __future__ import annotations

import os
import shlex
import subprocess
from functools import partial
from typing import Any

from runeconsole.core.errors import RuneError
from runeconsole.services.claude.permissions.service import PermissionRequest
from runeconsole.services.claude.session.session_view import is_background
from runeconsole.services.conversations.turns import Turn
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.hook_files import HookFile
from runeconsole.services.registry import AgentRecord
from runeconsole.services.review.records import ReviewRecord
from runeconsole.services.sources import LocalActions, RemoteActions
from runeconsole.services.sources.fleet import FleetFeed
from runeconsole.services.sources.model import SourcesModel
from runeconsole.services.supervision.service import Supervisor
from runeconsole.tui.cells.agent_facts import AgentFacts
from runeconsole.tui.conversations.transcripts import (
    LocalTranscript,
    RemoteTranscript,
    Transcript,
    last_turns,
)
from runeconsole.tui.panes.agent_actions import (
    FORKS,
    PEEK_LINES,
    STOP_BACKGROUND,
    LocalFacts,
    stopping,
)
from runeconsole.tui.support.new_task_start import Starter

CONFIRM = {
    "handoff": (
        "Hand off {key}?",
        "It is asked to save its work and exit; then a successor starts with its hook, on "
        "{source}.",
    ),
    "respawn": (
        "Re-spawn {key}?",
        "A successor starts with the same command and worktree, on {source}.",
    ),
    "kill": ("Kill {key}?", "Its tmux session on {source} is killed; its worktree stays."),
    "resume": (
        "Resume {key}?",
        "Its Claude Code session is continued (claude --resume) by a supervised successor, "
        "on {source}.",
    ),
}


class FleetAgents:
    def __init__(self, feed: FleetFeed, model: SourcesModel) -> None:
        self.feed, self.model = feed, model

    def record(self, key: str) -> AgentRecord | None:
        return self.model.agents.get(key)

    def where(self, key: str) -> str:
        return self.model.agents.source(key)

    def own(self, key: str) -> str:
        """The key its source knows the agent by."""
        return self.feed.own_key(self.where(key), key)

    def confirm(self, action: str, key: str) -> tuple[str, str]:
        if action == "kill" and stopping(self.record(key)):
            question, detail = STOP_BACKGROUND
            return question.format(key=key), detail.format(on=f" on {self.where(key)}")
        question, detail = CONFIRM[action]
        return question.format(key=key), detail.format(source=self.where(key))

    def run(self, action: str, key: str) -> str | None:
        source, own = self.where(key), self.own(key)
        actions = self.feed.actions(source)
        if action == "jump":
            return self.attach(actions, key, own)
        if action in FORKS:
            return self.fork(key, new_worktree=action != "fork")
        if action == "resume":
            actions.resume_session(own)
        else:
            {"handoff": actions.handoff, "respawn": actions.respawn, "kill": actions.kill}[action](
                own
            )
        return f"{action} {key}: sent to {source}"

    def fork(self, key: str, *, new_worktree: bool, at: str | None = None) -> str:
        source = self.where(key)
        self.feed.actions(source).fork_session(self.own(key), new_worktree=new_worktree, at=at)
        return f"fork {key}{f' at {at[:8]}' if at else ''}: sent to {source}"

    def attach(self, actions: LocalActions | RemoteActions, key: str, own: str) -> str | None:
        """``g``: the operator's tmux goes to the agent (a host's in a new window, over
        ``ssh -t``; a background session's through ``claude attach``); outside tmux, the
        command that attaches, to paste in a terminal."""
        if not isinstance(actions, RemoteActions):
            actions.attach(own)
            return None
        record = self.model.agents.get(key)
        fields = record.fields if record is not None and not record.error else {}
        session = str(fields.get("tmux_session") or "") or None
        if session is None and not is_background(fields):
            raise RuneError(f"{key} has no tmux session")
        socket = actions.source.meta.get("tmux_socket")  # the host's, from its snapshot
        argv = actions.attach_window_argv(own, session, socket)
        if not os.environ.get("TMUX"):
            return shlex.join(argv[argv.index("--") + 1 :])  # pasted into a shell as is
        subprocess.run(argv, check=False, capture_output=True, timeout=10)
        return None

    def allow(self, key: str, usd: float | None) -> str:
        source = self.where(key)
        self.feed.actions(source).allow(self.own(key), usd)
        return f"allow {key}: sent to {source}"

    def facts(self, key: str) -> AgentFacts:
        return FleetFacts(self, key)

    def conversation(self, key: str) -> Transcript:
        """``t``: read where the agent runs: a root of this machine's files, a host's
        ``runeconsole conversation --json`` over its SSH channel."""
        source, own = self.where(key), self.own(key)
        actions = self.feed.actions(source)  # Unreachable: said, nothing opens
        if isinstance(actions, LocalActions):
            return LocalTranscript(actions.project, own, where=source)
        return RemoteTranscript(actions, key, own, source)

    def task_places(self, key: str | None) -> list[str]:
        """``n``: the chosen row's source; with no row chosen, any of the fleet's."""
        if key is not None and self.record(key) is not None:
            return [self.where(key)]
        return [spec.name for spec in self.feed.specs]

    def starter(self, where: str) -> Starter:
        """A task started on ``where`` through its actions (``runeconsole new`` there). A
        root of this machine offers its main branch and its taken names as the project
        console does; for a host, the names of its agents the stream sent (``new`` there
        refuses one taken otherwise, and a name left as suggested is suggested there)."""
        actions = self.feed.actions(where)  # Unreachable: said, and no form opens
        if isinstance(actions, LocalActions):
            dispatch = Dispatch(actions.project)
            main = dispatch.queue.settings.main_branch
            return Starter(where, main, dispatch.creator.taken_names, actions.new_task)
        records = self.model.agents  # read here, on the UI thread that changes it
        there = [self.feed.own_key(where, k) for k in records.records if records.source(k) == where]
        return Starter(where, None, partial(_names_of, there), actions.new_task, names_known=False)


def _names_of(keys: list[str], role: str) -> set[str]:
    """The names of ``role``'s agents among ``keys`` (``worker-a`` -> ``a``)."""
    prefix = f"{role}-"
    return {key[len(prefix) :] for key in keys if key.startswith(prefix)}


class FleetFacts:
    """One agent's facts: its screen read and its messages said on its source (in its
    window's workers); its files as the project console reads them for a root of this
    machine, what its stream sent for a host (the records, the decisions)."""

    def __init__(self, agents: FleetAgents, key: str) -> None:
        self.agents, self.key = agents, key
        self.model = agents.model
        self.local: LocalFacts | None = None
        try:
            actions = agents.feed.actions(agents.where(key))
        except RuneError:  # down: what the stream last said is all there is
            actions = None
        if isinstance(actions, LocalActions):
            self.local = LocalFacts(Supervisor(actions.project), self.model.agents)
        # A host's screen is an SSH round trip and a runeconsole start: read less often.
        self.peek_every = 1.0 if self.local is not None else 2.0

    def chain(self, key: str) -> list[AgentRecord]:
        if self.local is not None:
            return self.local.chain(self.agents.own(key))
        source = self.agents.where(key)
        records = self.model.agents
        same = [r for k, r in records.records.items() if records.source(k) == source]
        by_id = {r.get("agent_id"): r for r in same if r.get("agent_id")}
        chain = [records.records[key]]
        seen = {chain[0].get("agent_id")}
        while (previous := chain[-1].get("predecessor_id")) in by_id and previous not in seen:
            seen.add(previous)
            chain.append(by_id[previous])
        return chain

    def hook_file(self, key: str) -> HookFile | None:
        return self.local.hook_file(self.agents.own(key)) if self.local is not None else None

    def phase(self, key: str) -> str | None:
        return self.model.agents.phases.get(key)

    def peek(self, key: str) -> Any:
        return self._actions(key).peek(self.agents.own(key), PEEK_LINES)

    def say(self, key: str, text: str) -> Any:
        return self._actions(key).say(self.agents.own(key), text)

    def _actions(self, key: str) -> LocalActions | RemoteActions:
        return self.agents.feed.actions(self.agents.where(key))

    def permission_history(self, key: str) -> list[PermissionRequest]:
        if self.local is not None:
            return self.local.permission_history(self.agents.own(key))
        source, own = self.agents.where(key), self.agents.own(key)
        keyed = self.model.permissions
        decided = [
            request
            for k, request in keyed.records.items()
            if keyed.source(k) == source and request.agent == own and not request.open
        ]
        return sorted(decided, key=PermissionRequest.sort_key)

    def last_turns(self, key: str) -> list[Turn]:
        return last_turns(self.agents.conversation(key))

    def reviews(self, key: str) -> list[ReviewRecord]:
        """A root of this machine's reviews of the agent (a host's are read with ``d``)."""
        return self.local.reviews(self.agents.own(key)) if self.local is not None else []
