"""Reaching the operator beyond the screen: ``runeconsole.notify`` in talisman.yml.

``command`` is an argument list, run without a shell; ``{title}`` and ``{body}`` in any
argument are replaced by the text (each stays one argument, whatever it holds).
``urls`` are Apprise URLs (ntfy, Slack, Telegram, Pushover, e-mail, …), sent through
``adapters/push.py`` (the ``notify`` extra). Either, both, or neither:

```yaml
runeconsole:
  notify:
    command: [notify-send, --app-name=runeconsole, "{title}", "{body}"]
    urls: ["ntfy://my-topic", "mailto://user:pass@example.com"]
```

``Notifier.notify`` is the one seam every event goes through (a new blocking question, a
permission prompt, a crash, and whatever else holds an agent up), at most once per agent
per ``every_seconds`` (60): the last time for each agent is kept in
``.claude/state/notify.json`` under a lock, so the console, the monitor and every hook
process share the limit. While a served console runs (``runeconsole serve``), the body
ends with its link (without the token: the phone that opened the console once has its
cookie). The command and the sending process are started and left to run on their own.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence

from runeconsole.core.errors import RuneError
from runeconsole.core.files import atomic_write_json
from runeconsole.core.locks import flocked
from runeconsole.core.paths import ProjectPaths

PLACEHOLDER = re.compile(r"\{(title|body)\}")
STATE_NAME = "notify.json"
MAX_TEXT = 500
_KEEP_SECONDS = 24 * 3600


LOG_NAME = "notify.log"


def arguments(command: Sequence[str], title: str, body: str) -> list[str]:
    """The command with ``{title}`` and ``{body}`` filled in, argument by argument."""
    values = {"title": title[:MAX_TEXT], "body": body[:MAX_TEXT]}
    return [PLACEHOLDER.sub(lambda match: values[match.group(1)], arg) for arg in command]


class Notifier:
    def __init__(
        self,
        paths: ProjectPaths,
        command: Sequence[str] | None,
        every_seconds: float = 60.0,
        clock: Callable[[], float] = time.time,
        *,
        urls: Sequence[str] | None = None,
    ) -> None:
        self.paths = paths
        self.command = list(command) if command else None
        self.urls = list(urls) if urls else None
        self.every = every_seconds
        self.clock = clock

    @property
    def state_path(self) -> str:
        return os.fspath(self.paths.state / STATE_NAME)

    def due(self, key: str) -> bool:
        """Claim the agent's turn: True (and recorded) when it was not notified lately."""
        now = self.clock()
        with flocked(os.fspath(self.paths.lock_for("notify")), what="the notification times"):
            try:
                with open(self.state_path, "rb") as handle:
                    sent = json.loads(handle.read(1024 * 1024))
                sent = sent if isinstance(sent, dict) else {}
            except (OSError, ValueError):
                sent = {}
            last = sent.get(key)
            if isinstance(last, int | float) and 0 <= now - last < self.every:
                return False
            kept = {
                k: v
                for k, v in sent.items()
                if isinstance(v, int | float) and now - v < _KEEP_SECONDS
            }
            kept[key] = now
            atomic_write_json(self.paths.inside(self.paths.state / STATE_NAME), kept)
        return True

    def notify(self, key: str, title: str, body: str) -> bool:
        """Tell the operator about ``key`` (the command, the URLs) unless it was told within
        ``every_seconds``; returns whether it was. ``OSError`` when the command cannot be
        started, ``RuneError`` when the URLs cannot be sent to (Apprise is missing); the
        other one is still tried."""
        if not (self.command or self.urls) or not self.due(key):
            return False
        link = self.console_link()
        if link:
            body = f"{body}\n{link}" if body else link
        failure: Exception | None = None
        from runeconsole.adapters import push

        if self.command:
            try:
                push.run_detached(arguments(self.command, title, body))
            except OSError as exc:
                failure = exc
        if self.urls:
            try:
                log = os.fspath(self.paths.inside(self.paths.state / LOG_NAME))
                push.send_detached(self.urls, title[:MAX_TEXT], body[:MAX_TEXT], log)
            except RuneError as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
        return True

    def console_link(self) -> str | None:
        """The served console's URL, while one runs for this project (or the user's fleet)."""
        from runeconsole.services.serving.record import served_url, user_state_dir

        return served_url([self.paths.state, user_state_dir()])
