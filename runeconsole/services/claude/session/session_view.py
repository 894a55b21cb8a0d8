"""What the newer hook events left in an identity (``session_facts``), read back for the
console, the CLI and the problems view: every value checked, a malformed one read as
absent. One home for how each is said in words."""

from __future__ import annotations

from typing import Any

from runeconsole.services.claude.session.activity import STOPPED
from runeconsole.services.claude.session.session_facts import BACKGROUND


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _object(fields: dict[str, Any], name: str) -> dict[str, Any]:
    value = fields.get(name)
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class Stop:
    """A turn that ended on an API error (StopFailure)."""

    __slots__ = ("at", "error", "message", "resets")

    def __init__(self, error: str, message: str | None, resets: str | None, at: str | None):
        self.error, self.message, self.resets, self.at = error, message, resets, at

    @property
    def problem(self) -> str:
        """``billing_error: Credit balance is too low`` (and when a rate limit lifts)."""
        text = f"{self.error}: {self.message}" if self.message else self.error
        if self.resets and "reset" not in (self.message or ""):
            text += f" (resets {self.resets})"
        return " ".join(text.split())


def stop_of(fields: dict[str, Any]) -> Stop | None:
    stopped = _object(fields, "stopped")
    error = _text(stopped.get("error"))
    if error is None:
        return None
    return Stop(
        error,
        _text(stopped.get("message")),
        _text(stopped.get("resets")),
        _text(stopped.get("at")),
    )


def activity_text(activity: str | None, fields: dict[str, Any]) -> str:
    """The activity as listed: ``stopped: billing_error`` for a stopped agent."""
    stop = stop_of(fields) if activity == STOPPED else None
    return f"{STOPPED}: {stop.error}" if stop is not None else activity or ""


def last_message(fields: dict[str, Any]) -> str | None:
    return _text(fields.get("last_message"))


def last_line(fields: dict[str, Any]) -> str:
    """The last message's last line that says something (its latest words), for a column."""
    text = last_message(fields) or ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def running_subagents(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """``(id, type)`` of each subagent running now."""
    running = _object(_object(fields, "subagents"), "running")
    found = []
    for agent_id, about in running.items():
        kind = _text(about.get("type")) if isinstance(about, dict) else None
        found.append((agent_id, kind or "subagent"))
    return found


def subagents_done(fields: dict[str, Any]) -> int:
    return _count(_object(fields, "subagents").get("done"))


def open_tasks(fields: dict[str, Any]) -> list[str]:
    """The subjects of the session's open tasks (TaskCreated, not yet completed)."""
    tasks = _object(_object(fields, "tasks"), "open")
    return [subject for subject in tasks.values() if isinstance(subject, str)]


def tasks_done(fields: dict[str, Any]) -> int:
    return _count(_object(fields, "tasks").get("done"))


def failed_tool(fields: dict[str, Any]) -> str | None:
    """``Bash false: Exit code 1`` (the last tool call that failed)."""
    failed = _object(fields, "failed_tool")
    tool = _text(failed.get("tool"))
    if tool is None:
        return None
    what, error = _text(failed.get("what")), _text(failed.get("error"))
    said = f"{tool} {what}" if what else tool
    if failed.get("interrupted") is True:
        said += " (interrupted)"
    return f"{said}: {error}" if error else said


def is_background(fields: dict[str, Any]) -> bool:
    return fields.get("kind") == BACKGROUND and background_id(fields) is not None


def background_id(fields: dict[str, Any]) -> str | None:
    return _text(fields.get("background_id"))


def session_name(fields: dict[str, Any]) -> str | None:
    return _text(fields.get("session_name"))


def facts(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """Each fact the hooks gave, as ``(label, text)``, for the agent's detail."""
    shown: list[tuple[str, str]] = []
    kind = _text(fields.get("kind"))
    if kind:
        short = background_id(fields)
        shown.append(("kind", f"{kind} ({short})" if short else kind))
    if session_name(fields):
        shown.append(("session name", session_name(fields) or ""))
    if _text(fields.get("cwd")):
        shown.append(("directory", str(fields["cwd"])))
    stop = stop_of(fields)
    if stop is not None:
        shown.append(("stopped", stop.problem))
    running = running_subagents(fields)
    done = subagents_done(fields)
    if running or done:
        types = ", ".join(kind for _, kind in running)
        shown.append(
            ("subagents", f"{len(running)} running{f' ({types})' if types else ''}, {done} done")
        )
    tasks = open_tasks(fields)
    if tasks or tasks_done(fields):
        listed = "; ".join(tasks[:5]) + (" …" if len(tasks) > 5 else "")
        shown.append(
            (
                "tasks",
                f"{len(tasks)} open{f' ({listed})' if listed else ''}, {tasks_done(fields)} done",
            )
        )
    failed = failed_tool(fields)
    if failed:
        shown.append(("last failed tool", failed))
    message = last_message(fields)
    if message:
        shown.append(("last message", message))
    return shown
