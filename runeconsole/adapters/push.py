"""Notifications leave through here: the operator's own command (``run_detached``) and
push notifications through Apprise (ntfy, Slack, Telegram, Pushover, e-mail, …).

Sending takes a network round trip or several, and Claude Code's hook, which notifies
too, must return at once; so ``send_detached`` hands the message to a process of its own
(``python -m runeconsole.adapters.push``, the message on its stdin: URLs hold secrets and
stay out of ``ps``) and returns. That process sends and exits; a failure is one line in
the log file it was given, never an exception in the caller. Apprise is an optional
extra: ``pip install 'runeconsole[notify]'``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from runeconsole.core.errors import RuneError

INSTALL_HINT = "pip install 'runeconsole[notify]'"


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("apprise") is not None


def send(urls: Sequence[str], title: str, body: str) -> None:
    """Send now (blocking); ``RuneError`` saying why not, naming no URL (they hold secrets)."""
    try:
        import apprise
    except ImportError as exc:
        raise RuneError(f"runeconsole.notify.urls needs Apprise: {INSTALL_HINT}") from exc
    sender = apprise.Apprise()
    for number, url in enumerate(urls, start=1):
        if not sender.add(url):
            raise RuneError(f"runeconsole.notify.urls: URL {number} is not one Apprise knows")
    if not sender.notify(title=title, body=body):
        raise RuneError("Apprise could not deliver the notification to every URL")


def run_detached(argv: Sequence[str]) -> None:
    """Start ``argv`` (no shell) in a session of its own, nothing attached, and return;
    ``OSError`` when it cannot be started. A thread waits for it: no zombie is left."""
    import subprocess
    import threading

    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    threading.Thread(target=process.wait, daemon=True).start()


def send_detached(urls: Sequence[str], title: str, body: str, log: str) -> None:
    """Start the sending process and return; ``RuneError`` if Apprise is not installed."""
    if not available():
        raise RuneError(f"runeconsole.notify.urls needs Apprise: {INSTALL_HINT}")
    import subprocess
    import threading

    message = json.dumps({"urls": list(urls), "title": title, "body": body, "log": log})
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "runeconsole.adapters.push"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(message.encode())
        process.stdin.close()
    except OSError:  # it died at once: its log says why, if it could say anything
        pass
    threading.Thread(target=process.wait, daemon=True).start()  # no zombie left behind


def _log(path: str, line: str) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {line}\n")
    except OSError:
        pass


def main() -> int:
    try:
        message = json.loads(sys.stdin.buffer.read(1024 * 1024))
        log = str(message.get("log") or os.devnull)
    except ValueError:
        return 0
    try:
        send(message["urls"], str(message["title"]), str(message["body"]))
    except RuneError as exc:
        _log(log, f"push failed: {exc.message}")
    except Exception as exc:  # Apprise's own failure: said in the log, never raised
        _log(log, f"push failed: {type(exc).__name__}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
