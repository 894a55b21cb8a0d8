"""Actions on a remote source's rows: the same CLI commands an operator could type, run
over the source's shared SSH connection, with ``--json`` so the outcome is read, not
guessed. Arguments go as an argv list and are quoted for the remote shell once (by the
transport). While the source is not connected an action is refused, with the reason,
and nothing is sent: an answer is never lost silently in an outage.

``LocalActions`` is the same interface for a root of this machine, in-process, so a
caller routes by the row's source and never asks which kind it holds.

``attach_argv`` is the ``g`` key for a remote agent: ``ssh -t HOST tmux -L SOCKET attach
-t =SESSION``, which the console opens in a new window of the operator's tmux; for a
Claude Code background session there, ``ssh -t HOST runeconsole background attach KEY``
(``claude attach`` on its host). ``kill`` stops either kind (``runeconsole kill`` routes a
background session to ``claude stop``). ``gate`` answers a pipeline's human gate.
``new_task`` is ``n``: ``runeconsole new --json`` there (``Dispatch.new`` for a root of
this machine). ``search`` is ``S``: the conversation search there (``runeconsole search
--json``), its hits named by their source for the caller to merge (``newest_first``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from runeconsole.adapters.ssh import failure_reason
from runeconsole.core.errors import RuneError
from runeconsole.services.budgets import hold
from runeconsole.services.claude.bridge.settings import ClaudeSettings
from runeconsole.services.claude.permissions.service import Permissions, Verdict
from runeconsole.services.claude.questions.answers import answer as give
from runeconsole.services.conversations.index import ConversationIndex
from runeconsole.services.conversations.query import Hit
from runeconsole.services.dispatch.continuing import Continuing
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.service import Dispatch, tidy_after_landing
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.pipelines.answers import GateAnswers
from runeconsole.services.project import Project
from runeconsole.services.reply import Replies
from runeconsole.services.review.report import review_report
from runeconsole.services.review.service import Reviews
from runeconsole.services.sources.remote import UP, RemoteSource
from runeconsole.services.supervision.service import Supervisor
from runeconsole.services.suspension import Suspension
from runeconsole.services.worker_questions import Questions

ACTION_TIMEOUT = 120.0  # a queue's tests or a handoff's wait can take a while
NEW_TASK_TIMEOUT = 900.0  # up to 16 worktrees, each with its setup command


class Unreachable(RuneError):
    """The source is not connected: the action was not sent."""


class LocalActions:
    """The same actions on a project of this machine, in-process (as the console does)."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def answer(
        self, question_id: str, *, options: Sequence[str] = (), text: str | None = None
    ) -> Any:
        questions = Questions(self.project)
        given = give(
            questions, questions.get(question_id), options=list(options) or None, text=text
        )
        return given.to_json()

    def decide(self, request_id: str, verdict: Verdict) -> Any:
        return Permissions(self.project).decide_and_report(
            request_id,
            verdict.behavior,
            message=verdict.message,
            always=verdict.always,
            every_agent=verdict.every_agent,
            via="fleet",
        )

    def gate(self, stem: str, node_id: str, answer: str, reason: str = "") -> Any:
        """A pipeline's human gate answered (``services/pipelines/answers.py``)."""
        return GateAnswers(self.project).answer(stem, node_id, answer, reason=reason).to_json()

    def process_queue(self, *, all_entries: bool = False) -> Any:
        report = MergeQueue(self.project).process(run_all=all_entries)
        removals = tidy_after_landing(self.project, report)
        return {**report.to_json(), "worktrees": [r.to_json() for r in removals]}

    def resume(self, key: str) -> Any:
        suspension = Suspension(self.project)
        return suspension.resume(suspension.find(key)).to_json()

    def respawn(self, key: str) -> Any:
        return Supervisor(self.project).respawn(key).to_json()

    def resume_session(self, key: str) -> Any:
        """``R``: an ended agent's Claude Code session resumed (``runeconsole resume``)."""
        return Continuing(Dispatch(self.project)).resume(key).to_json()

    def fork_session(
        self,
        key: str,
        *,
        name: str | None = None,
        new_worktree: bool = False,
        at: str | None = None,
    ) -> Any:
        """``F``: the agent's session forked into a new agent (``runeconsole fork``)."""
        continuing = Continuing(Dispatch(self.project))
        return continuing.fork(key, name=name, new_worktree=new_worktree, at=at).to_json()

    def handoff(self, key: str) -> Any:
        return Supervisor(self.project).handoff(key).to_json()

    def kill(self, key: str) -> Any:
        return Supervisor(self.project).kill(key).to_json()

    def attach(self, key: str) -> None:
        """``g``: the operator's tmux client switches to the agent's session."""
        Supervisor(self.project).switch_to(key)

    def allow(self, key: str, usd: float | None) -> Any:
        """``$``: an agent held by its budget goes on (``usd`` more, or for the day)."""
        limits = self.project.settings(ClaudeSettings).budgets
        return hold.allow(self.project.paths, key, usd, self.project.clock.now(), limits).to_json()

    # -- reviews (``review AGENT --json`` and its decisions) ---------------------------------

    def _reviews(self) -> Any:
        return Reviews(self.project)

    def review(self, key: str) -> Any:
        return review_report(self._reviews(), key)

    def review_comment(
        self, key: str, text: str, file: str | None, line: int | None, side: str
    ) -> Any:
        return self._reviews().comment(key, text, file=file, line=line, side=side).to_json()

    def review_approve(self, key: str) -> Any:
        return self._reviews().approve(key).to_json()

    def review_send(self, key: str) -> Any:
        return self._reviews().send(key).to_json()

    def say(self, key: str, text: str) -> Any:
        """``m``: the message pasted into the agent's pane and submitted (or refused)."""
        return Replies(self.project).say(key, text).to_json()

    def new_task(self, request: NewTask) -> Any:
        """``n``: a task and its attempts made here (``runeconsole new``), as its ``--json``
        prints it."""
        return Dispatch(self.project).new(request).to_json()

    def peek(self, key: str, lines: int) -> Any:
        """The agent's screen and last assistant message."""
        return Replies(self.project).peek(key, lines).to_json()

    def search(
        self,
        query: str,
        *,
        agent: str | None = None,
        role: str | None = None,
        since: datetime | None = None,
        tool: str | None = None,
        speaker: str | None = None,
        limit: int = 20,
    ) -> list[Hit]:
        """``S``: the conversation search over this root's index, newest first (built
        first if it never was, as ``runeconsole search`` does)."""
        index = ConversationIndex(self.project)
        try:
            index.built()
            return index.search(
                query, agent=agent, role=role, since=since, tool=tool, speaker=speaker, limit=limit
            )
        finally:
            index.close()


def newest_first(groups: Iterable[Iterable[Hit]], limit: int = 20) -> list[Hit]:
    """The hits of several sources merged, newest first (those without a moment last)."""
    flat = [hit for group in groups for hit in group]
    flat.sort(key=lambda hit: hit.at.timestamp() if hit.at else float("-inf"), reverse=True)
    return flat[:limit]


def named(hits: list[Hit], source: str) -> list[Hit]:
    """The hits of a local root, named by its source."""
    return [replace(hit, source=source) for hit in hits]


class RemoteActions:
    def __init__(self, source: RemoteSource, timeout: float = ACTION_TIMEOUT) -> None:
        self.source = source
        self.timeout = timeout

    def call(self, *args: str, accept: tuple[int, ...] = (0,), timeout: float | None = None) -> Any:
        """Run ``runeconsole ARGS --root R`` on the source's host; its JSON output.

        ``accept``: exit statuses that still carry a JSON report (``merge-queue process``
        exits 1 when an entry failed, and says which on stdout)."""
        source = self.source
        status = source.status
        if status.state != UP:
            why = status.reason or "still connecting"
            raise Unreachable(
                f"{source.name} is unreachable ({why}): nothing was sent; try again when it is back"
            )
        argv = [*source.spec.command, *args, "--root", source.spec.root]
        done = source.transport.run(argv, timeout=timeout or self.timeout)
        if done.returncode not in accept or (done.returncode and not done.stdout.strip()):
            reason = failure_reason(done.returncode, done.stderr, source.spec.host or "")
            raise RuneError(f"{source.name}: {reason}")
        text = done.stdout.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            raise RuneError(f"{source.name}: not JSON from runeconsole: {text[:120]!r}") from None

    def answer(
        self, question_id: str, *, options: Sequence[str] = (), text: str | None = None
    ) -> Any:
        choice = ["--text", text] if text is not None else []
        for option in options:
            choice += ["--option", option]
        if not choice:
            raise RuneError("an answer needs an option or a text")
        return self.call("question", "answer", question_id, *choice, "--json")

    def decide(self, request_id: str, verdict: Verdict) -> Any:
        said = ["--message", verdict.message] if verdict.message else []
        if verdict.always:
            said = ["--always", *(["--every-agent"] if verdict.every_agent else [])]
        behavior = f"--{verdict.behavior}"
        return self.call("permissions", "decide", request_id, behavior, *said, "--json")

    def gate(self, stem: str, node_id: str, answer: str, reason: str = "") -> Any:
        """A pipeline's human gate answered there (``runeconsole gate approve|reject``)."""
        said = ["--reason", reason] if reason else []
        return self.call("gate", answer, stem, node_id, *said, "--json")

    def process_queue(self, *, all_entries: bool = False) -> Any:
        every = ["--all"] if all_entries else []
        return self.call("merge-queue", "process", *every, "--json", accept=(0, 1))

    def resume(self, key: str) -> Any:
        """A suspended task (``key``: its context file, relative to the root) resumed
        there: verified, counted, and its injection returned."""
        return self.call("suspended", "resume", key, "--json")

    def respawn(self, key: str) -> Any:
        return self.call("respawn", key, "--json")

    def resume_session(self, key: str) -> Any:
        return self.call("resume", key, "--json")

    def fork_session(
        self,
        key: str,
        *,
        name: str | None = None,
        new_worktree: bool = False,
        at: str | None = None,
    ) -> Any:
        more = [*([f"--name={name}"] if name else []), *([f"--at={at}"] if at else [])]
        if new_worktree:
            more.append("--new-worktree")
        return self.call("fork", key, *more, "--json", timeout=NEW_TASK_TIMEOUT)

    def handoff(self, key: str) -> Any:
        return self.call("handoff", key, "--json")

    def kill(self, key: str) -> Any:
        return self.call("kill", key, "--json")

    def allow(self, key: str, usd: float | None) -> Any:
        more = ["--usd", f"{usd:g}"] if usd is not None else []
        return self.call("budget", "allow", key, *more, "--json")

    def review(self, key: str) -> Any:
        """``review KEY --json`` there: its changes, the diff, its open review (exit 1 with
        a report when its worktree cannot be read: the report says why)."""
        return self.call("review", key, "--json", accept=(0, 1))

    def review_comment(
        self, key: str, text: str, file: str | None, line: int | None, side: str
    ) -> Any:
        where = [*(["--file", file] if file else []), *(["--line", str(line)] if line else [])]
        # --text=: a text that begins with '-' is never taken for an option
        return self.call(
            "review", "comment", key, *where, "--side", side, f"--text={text}", "--json"
        )

    def review_approve(self, key: str) -> Any:
        return self.call("review", "approve", key, "--json")

    def review_send(self, key: str) -> Any:
        return self.call("review", "send", key, "--json")

    def say(self, key: str, text: str) -> Any:
        # One argument, whatever the text starts with (a dash, a newline).
        return self.call("say", key, f"--text={text}", "--json")

    def peek(self, key: str, lines: int) -> Any:
        return self.call("peek", key, "--lines", str(lines), "--json")

    def search(
        self,
        query: str,
        *,
        agent: str | None = None,
        role: str | None = None,
        since: datetime | None = None,
        tool: str | None = None,
        speaker: str | None = None,
        limit: int = 20,
    ) -> list[Hit]:
        """``runeconsole search --json`` there; each hit named by this source. Every value
        as ``--option=VALUE`` (a query that begins with '-' is never taken for an option)."""
        argv = [f"--query={query}", "--limit", str(limit), "--json"]
        for option, value in (("agent", agent), ("role", role), ("tool", tool)):
            if value is not None:
                argv.append(f"--{option}={value}")
        if speaker is not None:
            argv.append(f"--speaker={speaker}")
        if since is not None:
            argv.append(f"--since={since.isoformat()}")
        found = self.call("search", *argv)
        if not isinstance(found, list):
            raise RuneError(f"{self.source.name}: search did not return a list of hits")
        name = self.source.name
        return [Hit.from_json(item, name) for item in found if isinstance(item, dict)]

    def new_task(self, request: NewTask) -> Any:
        """``runeconsole new ... --json`` there (exit 1 with a report when no attempt
        started: the report says why). Every value as ``--option=VALUE``, one argument
        whatever it starts with (a task beginning with '-', several lines)."""
        if "\0" in request.text:
            raise RuneError("the task holds a NUL character")
        argv = [f"--task={request.text}", "--count", str(request.count)]
        argv.append(f"--role={request.role}")
        for option, value in (
            ("base", request.base),
            ("name", request.name),
            ("model", request.model),
            ("permission-mode", request.permission_mode),
            ("node-id", request.node_id),
            ("bead-id", request.bead_id),
        ):
            if value is not None:
                argv.append(f"--{option}={value}")
        if request.background:
            argv.append("--background")
        return self.call("new", *argv, "--json", accept=(0, 1), timeout=NEW_TASK_TIMEOUT)

    def attach_argv(self, session: str, socket: str | None = None) -> list[str]:
        """The local argv that attaches a terminal to the agent's tmux session there."""
        tmux = ["tmux", *(["-L", socket] if socket else []), "attach-session", "-t", f"={session}"]
        return self.source.transport.argv(tmux, tty=True)

    def background_attach_argv(self, key: str) -> list[str]:
        """The local argv that opens a background session there in a terminal here."""
        spec = self.source.spec
        remote = [*spec.command, "background", "attach", key, "--root", spec.root]
        return self.source.transport.argv(remote, tty=True)

    def attach_window_argv(
        self,
        key: str,
        session: str | None,
        socket: str | None = None,
        tmux: Sequence[str] = ("tmux",),
    ) -> list[str]:
        """``tmux new-window`` on the operator's tmux (``tmux``: its command, ``-L`` and
        all) running ``attach_argv``: the ``g`` key on a remote agent (with no tmux
        session: a background session, ``background_attach_argv``)."""
        window = [*tmux, "new-window", "-n", f"{self.source.name}/{key}", "--"]
        if session is None:
            return [*window, *self.background_attach_argv(key)]
        return [*window, *self.attach_argv(session, socket)]
