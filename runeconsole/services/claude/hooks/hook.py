"""``runeconsole claude hook``: the one command Claude Code runs for every hook event.

It must never harm the agent. Whatever goes wrong (stdin that is not an event, too
large, a project whose state cannot be written, a bug) it exits 0 with nothing on
stdout and appends one line to ``.claude/state/claude/hook.log``; its only output is
the answer to an AskUserQuestion call or the decision on a permission request, one
JSON object. A failsafe alarm ends it
silently if it ever runs past its time (Claude Code would otherwise wait for it).

It is also fast: ``runeconsole/__main__.py`` comes straight here for ``claude hook``,
without the CLI's parser, and the modules of the common events import nothing heavy
(no dataclasses, no typing); what an event needs beyond that (git at a compaction, the
relay at a question) is imported by that event alone.

Each event first updates the agent (``agent_state``: one read and at most one write of
its identity, its registration or end included); then the event's own step runs
(``STEPS``), with the identity as just read. An event the hook answers (``RESPONDERS``:
an AskUserQuestion call, a permission request) puts its request where the console sees
it first and updates the agent then, and its answer is the hook's stdout. A new hook
kind is a new entry there and in ``install.HOOK_EVENTS``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

try:  # the C module itself: `signal` builds an enum of every signal, a cost on each event
    import _signal as signal  # type: ignore[import-not-found]  # C module, no stub
except ImportError:  # pragma: no cover - another Python
    import signal

from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.bridge import locate
from runeconsole.services.claude.bridge import payload as events
from runeconsole.services.claude.bridge.payload import HookInputError, HookPayload
from runeconsole.services.claude.hooks import agent_state, terminal
from runeconsole.services.claude.hooks.agent_state import Outcome
from runeconsole.services.claude.permissions import files as permission_files
from runeconsole.services.claude.session import activity

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import IO, Any

MAX_STDIN = 1024 * 1024
EVENT_SECONDS = 20  # failsafe for every event but a relayed question
ASK_SECONDS = 3570  # failsafe for a call the console decides: past the longest wait, < 3600
LOG_NAME = "hook.log"
LOG_LIMIT = 1024 * 1024
LINE_CHARS = 1000


class _OutOfTime(Exception):
    pass


def _out_of_time(*_: object) -> None:
    raise _OutOfTime


def read_event(stream: IO[bytes]) -> HookPayload:
    if stream.isatty():
        raise HookInputError("stdin is a terminal: Claude Code pipes each event in")
    raw = stream.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:
        raise HookInputError(f"stdin is larger than {MAX_STDIN} bytes")
    return HookPayload.parse(raw)


# -- each event's own step (after the agent's state is updated) ---------------------------


Relay = Callable[..., str]


def _relay(
    paths: ProjectPaths,
    role: str,
    name: str,
    payload: HookPayload,
    now: datetime,
    ask: Relay,
    asked: str,
) -> str:
    """A question for the operator: relayed by ``ask`` to an open console (its answer
    printed), else nothing printed, the operator notified (``asked``) and Claude Code
    asks in its own dialog."""
    from runeconsole.services.claude.bridge import presence

    def waiting() -> None:
        agent_state.record(paths, role, name, payload, now)

    key = f"{role}-{name}"
    if not presence.console_open(paths):
        waiting()
        _notify(paths, key, f"{key} asks", asked)
        return ""
    signal.alarm(ASK_SECONDS)
    return ask(paths, key, payload, now, written=waiting)


def _answer_questions(
    paths: ProjectPaths, role: str, name: str, payload: HookPayload, now: datetime
) -> str | None:
    """An AskUserQuestion call: relayed to an open console (the answers printed), else
    nothing printed and Claude Code asks in its own dialog. ``None``: not such a call."""
    if not payload.asks_the_user:
        return None
    from runeconsole.services.claude.questions import relay

    return _relay(paths, role, name, payload, now, relay.ask, activity.asked(payload))


def _answer_elicitation(
    paths: ProjectPaths, role: str, name: str, payload: HookPayload, now: datetime
) -> str:
    """An MCP server's request for input: its form relayed to an open console, else
    Claude Code's own dialog (``elicitation``)."""
    from runeconsole.services.claude.questions import elicitation

    return _relay(paths, role, name, payload, now, elicitation.ask, activity.elicited(payload))


def _decide_permission(
    paths: ProjectPaths, role: str, name: str, payload: HookPayload, now: datetime
) -> str:
    """A permission request: a rule's decision, the operator's from an open console, or
    nothing printed (Claude Code asks in its own dialog)."""
    from runeconsole.services.claude.permissions import relay as permission_relay

    def waiting() -> None:
        agent_state.record(paths, role, name, payload, now)

    signal.alarm(ASK_SECONDS)
    return permission_relay.request(paths, f"{role}-{name}", payload, now, written=waiting)


def _held(
    paths: ProjectPaths, role: str, name: str, payload: HookPayload, now: datetime
) -> str | None:
    """A tool call of an agent whose budget is spent: denied, with the reason, and the hold
    noted in its identity. ``None``: not held (or no budget set)."""
    from runeconsole.services.claude.bridge import settings as claude_settings

    limits = claude_settings.load(paths).budgets
    if not any(limits.values()):
        return None
    from runeconsole.services.budgets import hold

    key = f"{role}-{name}"
    denied = hold.denial(paths, key, now, limits)
    if denied is None:
        return None
    from runeconsole.services.cost.ledger import local_day

    hold.note(paths, key, denied[1], local_day(now), claude_settings.notifier_for)
    return denied[0]


def _notify_prompt(paths: ProjectPaths, agent: Outcome, payload: HookPayload, now: datetime) -> str:
    if payload.notification_type == "permission_prompt":
        key = agent.key
        _notify(paths, key, f"{key} needs your permission", payload.message or "")
    return ""


def _stopped(paths: ProjectPaths, agent: Outcome, payload: HookPayload, now: datetime) -> str:
    """The turn ended on an API error: the operator is told (the agent waits for them)."""
    error = payload.text("error") or "an API error"
    said = payload.text("last_assistant_message") or ""
    _notify(paths, agent.key, f"{agent.key} stopped: {error}", said)
    return ""


def _denied(paths: ProjectPaths, agent: Outcome, payload: HookPayload, now: datetime) -> str:
    """Auto mode's classifier refused a tool call: kept with the permission decisions."""
    from runeconsole.services.claude.permissions import denials

    denials.record(paths, agent.key, payload, now)
    return ""


def _checkpoint(paths: ProjectPaths, agent: Outcome, payload: HookPayload, now: datetime) -> str:
    """Before a compaction: the hook file checkpointed from the agent's worktree (as the
    identity was just read and written: it is not read again)."""
    from runeconsole.services.claude.hooks import lifecycle

    fields = agent.fields or {}
    worktree = fields.get("worktree_path") or fields.get("worktree")
    lifecycle.checkpoint(paths, agent.key, worktree, now)
    return ""


# Events that say the agent went on: a permission request it waited on was answered in
# Claude Code's own dialog (which does not stop the waiting hook).
WENT_ON = frozenset(
    {
        events.PRE_TOOL_USE,
        events.POST_TOOL_USE,
        events.USER_PROMPT_SUBMIT,
        events.STOP,
        events.SESSION_END,
        events.POST_TOOL_USE_FAILURE,
        events.PERMISSION_DENIED,
        events.STOP_FAILURE,
    }
)


def _went_on(paths: ProjectPaths, key: str) -> None:
    waited = permission_files.waiting_on(paths, key)
    if waited:
        from runeconsole.services.claude.permissions import relay as permission_relay

        permission_relay.went_on(paths, key, waited)


Step = Callable[[ProjectPaths, Outcome, HookPayload, datetime], str]
STEPS: dict[str, Step] = {
    events.NOTIFICATION: _notify_prompt,
    events.PRE_COMPACT: _checkpoint,
    events.STOP_FAILURE: _stopped,
    events.PERMISSION_DENIED: _denied,
}
Responder = Callable[[ProjectPaths, str, str, HookPayload, datetime], "str | None"]
RESPONDERS: dict[str, Responder] = {
    events.PRE_TOOL_USE: _answer_questions,
    events.PERMISSION_REQUEST: _decide_permission,
    events.ELICITATION: _answer_elicitation,
}


def _notify(paths: ProjectPaths, key: str, title: str, body: str) -> None:
    from runeconsole.services.claude.bridge import settings as claude_settings

    settings = claude_settings.load(paths)
    if settings.notify_command or settings.notify_urls:
        from runeconsole.services.claude.bridge.settings import notifier_for

        notifier_for(paths).notify(key, title, body)


# -- the run -------------------------------------------------------------------------------


def handle(payload: HookPayload, environ: Mapping[str, str]) -> str:
    """The event's effect; the hook's stdout (``""`` for all but answered questions)."""
    root = locate.project_root(payload.cwd, environ)
    if root is None:
        return ""  # not a project (outside any git checkout): nothing to record
    paths = ProjectPaths(root)
    role, name = locate.agent_key(payload, environ, paths)
    now = datetime.now(UTC)
    if payload.event == events.PRE_TOOL_USE:
        held = _held(paths, role, name, payload, now)
        if held is not None:
            return held
    respond = RESPONDERS.get(payload.event)
    answer = respond(paths, role, name, payload, now) if respond else None
    if answer is not None:
        return answer
    where = terminal.from_environ(environ)
    outcome = agent_state.record(paths, role, name, payload, now, environ, where)
    if payload.event in WENT_ON:
        _went_on(paths, outcome.key)
    step = STEPS.get(payload.event)
    if step is None or outcome.fields is None:
        return ""
    return step(paths, outcome, payload, now)


def run(stdin: IO[bytes], environ: Mapping[str, str]) -> str:
    """Never raises: any failure is one log line and an empty answer."""
    payload: HookPayload | None = None
    previous = signal.signal(signal.SIGALRM, _out_of_time)
    signal.alarm(EVENT_SECONDS)
    try:
        payload = read_event(stdin)
        return handle(payload, environ)
    except _OutOfTime:
        log(payload, environ, "stopped: ran past its time (Claude Code's own dialog, if any)")
    except BaseException as exc:
        log(payload, environ, f"{type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return ""


def log(payload: HookPayload | None, environ: Mapping[str, str], message: str) -> None:
    """One line in the project's hook log; nowhere, when no project can be told."""
    try:
        root = locate.project_root(payload.cwd if payload else None, environ)
        if root is None:
            return
        paths = ProjectPaths(root)
        directory = paths.inside(paths.claude_bridge)
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, LOG_NAME)
        try:
            if os.stat(path).st_size > LOG_LIMIT:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        event = payload.event if payload else "-"
        text = " ".join(message.split())[:LINE_CHARS]
        line = f"{iso_z(datetime.now(UTC))} {event} pid={os.getpid()} {text}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except BaseException:
        pass


def main(argv: Any = None) -> int:
    """Exit status 0, always; stdout is empty or one JSON object."""
    text = run(sys.stdin.buffer, os.environ)
    if text:
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 0
