"""``runeconsole claude statusline``: Claude Code's status line command, chained.

``claude install`` makes this the ``statusLine`` of the settings file, with the status
line that was in effect before (the user's own) carried in its arguments
(``--previous ~/bin/line.sh --line '{…}'``: ``statusline_install``). Claude Code runs it
whenever its status bar changes, with one JSON object on stdin (``meter.StatusInput``).

It starts the user's command first (``/bin/sh -c``, the same stdin, its stdout and
stderr straight to Claude Code, so its output is shown unchanged), waits for it, then
hands the recording of what the JSON says to a process of its own (``--record``,
``meter.from_status_line``: written only when something the console shows changed, under
the identity's lock) and exits with the command's status: Claude Code waits for the
user's line no longer than it would without us, plus an interpreter's start. With no
previous status line it records, then prints a short line of its own (the budget's state
in it). Like the hook it never harms the agent: whatever goes wrong in the recording is one line in
``.claude/state/claude/hook.log``. It imports no Textual and no YAML, and the recording's
modules only where it records.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing itself is not imported: the line starts faster
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from runeconsole.services.claude.meter import StatusInput

STATUS_LINE = "StatusLine"  # its name in the hook log
CARRIED = ("--previous", "--beneath")  # then the user's command (statusline_install)
RECORD = "--record"
MAX_STDIN = 1024 * 1024
FEED_SECONDS = 5.0
RECORD_SECONDS = 10
SHELL = "/bin/sh"


def previous_line(argv: list[str]) -> str | None:
    """The command of the status line chained after ours (``--previous CMD`` or
    ``--beneath CMD``), if there is one."""
    for flag in CARRIED:
        if flag in argv[:-1]:
            command = argv[argv.index(flag) + 1]
            return command if command.strip() else None
    return None


def read_stdin(stream: Any) -> bytes:
    """What Claude Code wrote (nothing from a terminal; nothing when over the cap)."""
    try:
        data = b"" if stream.isatty() else stream.read(MAX_STDIN + 1)
    except (OSError, ValueError):
        return b""
    return b"" if len(data) > MAX_STDIN else data  # theirs gets nothing, not a cut object


def start(command: str, data: bytes) -> int:
    """The user's command, its stdin fed ``data``; its pid."""
    read_end, write_end = os.pipe()
    try:
        pid = os.posix_spawn(
            SHELL,
            [SHELL, "-c", command],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0)],
        )
    finally:
        os.close(read_end)
    try:
        _feed(write_end, data)
    finally:
        os.close(write_end)
    return pid


def _feed(fd: int, data: bytes) -> None:
    """Write ``data`` to the command's stdin, for as long as it reads (a command that does
    not read its stdin, or exits first, is no error)."""
    import time

    view = memoryview(data)
    os.set_blocking(fd, False)
    deadline = time.monotonic() + FEED_SECONDS
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            if time.monotonic() > deadline:
                return
            import select

            select.select([], [fd], [], 0.05)
        except OSError:  # it exited, or closed its stdin
            return


def finish(pid: int) -> int:
    """Wait for the command; its exit status (128 + N for a signal), as a shell says it."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def record(
    data: bytes, environ: Mapping[str, str]
) -> tuple[StatusInput | None, dict[str, Any] | None]:
    """What the JSON says, recorded for its agent; the input and the agent's fields (either
    ``None`` when there is no agent to record it for)."""
    import json

    from runeconsole.services.claude.meter import StatusInput
    from runeconsole.services.claude.payload import HookPayload

    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        from runeconsole.services.claude.payload import HookInputError

        raise HookInputError("stdin is not a JSON status line") from None
    if not isinstance(parsed, dict):
        return None, None
    status = StatusInput(parsed)
    payload = HookPayload({**parsed, "hook_event_name": STATUS_LINE})
    from runeconsole.core.errors import WriteFailed
    from runeconsole.services.claude import status_record

    try:
        return status, status_record.record(payload, status, environ)
    except WriteFailed as exc:  # a full disk, a read-only root: the line shows all the same
        _log(data, environ, exc.message)
        return status, None


def ours(status: StatusInput | None, fields: dict[str, Any] | None) -> str:
    """The short line shown when the user had none of their own."""
    if status is None:
        return "runeconsole"
    from runeconsole.services.claude.status_record import summary

    return summary(status, fields)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[3:] if argv is None else argv
    data = read_stdin(sys.stdin.buffer)
    if argv[:1] == [RECORD]:  # the recording a chained line handed over
        os.nice(5)  # behind the agent and its line, on a busy machine
        _recorded(data, os.environ)
        return 0
    previous = previous_line(argv)
    if previous is None:
        status, fields = _recorded(data, os.environ)
        try:
            sys.stdout.write(ours(status, fields) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        return 0
    try:
        pid = start(previous, data)
    except OSError as exc:
        _log(data, os.environ, f"the previous status line did not start: {exc}")
        record_aside(data)
        return 1  # theirs not started: no line, as without us
    status = finish(pid)
    record_aside(data)  # after theirs: it takes no CPU from their line while it runs
    return status


def record_aside(data: bytes) -> None:
    """The recording in a process of its own (``--record``), started with its stdout and
    stderr on ``/dev/null`` and in a session of its own: nothing of Claude Code's is held
    open by it, so the user's line is read as soon as their command ends."""
    if not data:
        return
    read_end, write_end = os.pipe()
    quiet = os.open(os.devnull, os.O_RDWR)
    try:
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-P", "-m", "runeconsole", "claude", "statusline", RECORD],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, read_end, 0),
                (os.POSIX_SPAWN_DUP2, quiet, 1),
                (os.POSIX_SPAWN_DUP2, quiet, 2),
            ],
            setsid=True,
        )
    except OSError as exc:
        _log(data, os.environ, f"the recording did not start: {exc}")
        return
    finally:
        os.close(read_end)
        os.close(quiet)
    try:
        _feed(write_end, data)
    finally:
        os.close(write_end)


def _recorded(data: bytes, environ: Mapping[str, str]) -> tuple[Any, Any]:
    """``record`` that never raises, nor runs past ``RECORD_SECONDS``."""
    try:
        import _signal as signal  # type: ignore[import-not-found]  # C module, no stub
    except ImportError:  # pragma: no cover - another Python
        import signal

    def out_of_time(*_: object) -> None:
        raise TimeoutError("ran past its time")

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(RECORD_SECONDS)
    try:
        if data:
            return record(data, environ)
    except BaseException as exc:
        _log(data, environ, f"{type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return None, None


def _log(data: bytes, environ: Mapping[str, str], message: str) -> None:
    try:
        import json

        from runeconsole.services.claude.hook import log
        from runeconsole.services.claude.payload import HookPayload

        try:
            parsed = json.loads(data.decode("utf-8"))
            payload = HookPayload({**parsed, "hook_event_name": STATUS_LINE})
        except Exception:
            payload = None
        log(payload, environ, message)
    except BaseException:
        pass
