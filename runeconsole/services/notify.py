"""Reaching the operator beyond the screen: ``runeconsole.notify.command`` in talisman.yml.

The command is an argument list, run without a shell; ``{title}`` and ``{body}`` in any
argument are replaced by the text (each stays one argument, whatever it holds):

```yaml
runeconsole:
  notify:
    command: [notify-send, --app-name=runeconsole, "{title}", "{body}"]
```

It is run for a new blocking question, a permission prompt and a crash, at most once per
agent per ``every_seconds`` (60): the last time for each agent is kept in
``.claude/state/notify.json`` under a lock, so the console, the monitor and every hook
process share the limit. The command is started and left to run on its own.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence

from runeconsole.core.files import atomic_write_json
from runeconsole.core.flock import flocked
from runeconsole.core.paths import ProjectPaths

PLACEHOLDER = re.compile(r"\{(title|body)\}")
STATE_NAME = "notify.json"
MAX_TEXT = 500
_KEEP_SECONDS = 24 * 3600


def notifier_for(paths: ProjectPaths) -> Notifier:
    """The project's notifier, as talisman.yml sets it (a command of none: never runs)."""
    from runeconsole.services.claude import settings

    found = settings.load(paths)
    return Notifier(paths, found.notify_command, found.notify_every_seconds)


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
    ) -> None:
        self.paths = paths
        self.command = list(command) if command else None
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
        """Run the command for ``key`` unless it ran for it within ``every_seconds``;
        returns whether it ran. ``OSError`` when the program cannot be started."""
        if not self.command or not self.due(key):
            return False
        import subprocess

        process = subprocess.Popen(
            arguments(self.command, title, body),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._reap(process)
        return True

    @staticmethod
    def _reap(process: object) -> None:
        """Wait for the command in the background, so no finished one lingers as a zombie
        in a long-running console."""
        import threading

        threading.Thread(target=process.wait, daemon=True).start()  # type: ignore[attr-defined]
