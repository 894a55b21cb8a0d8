"""The bridge's settings in ``.claude/talisman.yml``, and a cache the hook reads instead.

```yaml
runeconsole:
  claude:
    context_window_tokens: 200000   # only when set: context_left_percent is of this many
    context_windows: {claude-opus-5-5: 1000000}   # by model, over the built-in table
    prices: {claude-opus-5-5: {input: 4, output: 20, cache_write: 5, cache_read: 0.2}}
    ask_wait_seconds: 300           # how long an AskUserQuestion waits for the console
    permission_wait_seconds: 120    # how long a permission request waits for a decision
  notify:
    command: [notify-send, "{title}", "{body}"]
    urls: ["ntfy://my-topic"]       # Apprise URLs (pip install 'runeconsole[notify]')
    every_seconds: 60               # at most one notification per agent this often
  budgets: {per_agent_usd: 50, per_day_usd: 20, fleet_day_usd: 200}
```

Without ``context_window_tokens`` the window is the one Claude Code's status line
reports for the session, else the model's (``services/cost/prices.py``), else 200,000.

Claude Code runs the hook for every event, and importing a YAML parser would be most
of its time; so the values the hook needs are kept in
``.claude/state/claude/settings.json`` beside the talisman's size and modification
stamp, and the talisman is read again only when it changed. A bad value is reported
(the console and ``claude status`` show it) and the default is used.
"""

from __future__ import annotations

import json
import os

from runeconsole.core.errors import RuneError
from runeconsole.core.paths import ProjectPaths

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

    from runeconsole.services.notify import Notifier

CONTEXT_WINDOW = 200_000  # the window of a model nothing tells us about
ASK_WAIT_SECONDS = 300.0
PERMISSION_WAIT_SECONDS = 120.0
MAX_ASK_WAIT_SECONDS = 3540.0  # the installed hooks' timeout (3600 s) must outlast a wait
NOTIFY_EVERY_SECONDS = 60.0
CACHE_NAME = "settings.json"
TALISMAN_NAME = "talisman.yml"  # core.config.TALISMAN, named here so YAML is not imported
_FORMAT = 4  # the cache of an older version is read again from the talisman


class ClaudeSettings:
    __slots__ = (
        "ask_wait_seconds",
        "budgets",
        "context_window_tokens",
        "context_windows",
        "notify_command",
        "notify_every_seconds",
        "notify_urls",
        "permission_wait_seconds",
        "prices",
        "problems",
        "relay_enabled",
    )

    def __init__(
        self,
        context_window_tokens: int | None = None,
        ask_wait_seconds: float = ASK_WAIT_SECONDS,
        relay_enabled: bool = True,
        notify_command: list[str] | None = None,
        notify_every_seconds: float = NOTIFY_EVERY_SECONDS,
        problems: list[str] | None = None,
        permission_wait_seconds: float = PERMISSION_WAIT_SECONDS,
        notify_urls: list[str] | None = None,
        context_windows: dict[str, int] | None = None,
        prices: dict[str, dict[str, float]] | None = None,
        budgets: dict[str, float | None] | None = None,
    ) -> None:
        self.context_window_tokens = context_window_tokens  # None: not set
        self.ask_wait_seconds = ask_wait_seconds
        self.relay_enabled = relay_enabled
        self.notify_command = notify_command
        self.notify_every_seconds = notify_every_seconds
        self.problems = problems or []
        self.permission_wait_seconds = permission_wait_seconds
        self.notify_urls = notify_urls
        self.context_windows = context_windows or {}
        self.prices = prices or {}
        self.budgets = budgets or {}

    def window_for(self, model: str | None, reported: object = None) -> int:
        """The context window in tokens: the setting when set, else what Claude Code
        reported for the session, else the model's, else ``CONTEXT_WINDOW``."""
        if self.context_window_tokens is not None:
            return self.context_window_tokens
        if isinstance(reported, int) and not isinstance(reported, bool) and reported > 0:
            return reported
        from runeconsole.services.cost import prices

        return prices.window(model, self.context_windows) or CONTEXT_WINDOW

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaudeSettings:
        return cls(**{name: data[name] for name in cls.__slots__ if name in data})

    @classmethod
    def from_talisman(cls, talisman: Any) -> ClaudeSettings:
        """From a loaded ``core.config.Talisman`` (lenient or strict, as the caller loaded it)."""
        from runeconsole.services.budgets.judge import checked_limits
        from runeconsole.services.cost import prices
        from runeconsole.services.worker_questions import RelaySettings

        claude = talisman.section("runeconsole", "claude")
        window = None
        if claude.get("context_window_tokens", None) is not None:
            window = claude.integer("context_window_tokens", CONTEXT_WINDOW, minimum=1000)
        windows, wrong_windows = prices.checked_windows(claude.get("context_windows", None))
        rates, wrong_prices = prices.checked_prices(claude.get("prices", None))
        for key, wrong, allowed in (
            ("context_windows", wrong_windows, "model: tokens (a whole number >= 1000)"),
            ("prices", wrong_prices, "model: {input, output, cache_write, cache_read} in $/M"),
        ):
            for entry in wrong:
                talisman.report(
                    f"{claude.where(key)}: runeconsole.claude.{key} entry {entry} is not "
                    f"usable; allowed: {allowed}"
                )
        wait = claude.number(
            "ask_wait_seconds", ASK_WAIT_SECONDS, minimum=1, maximum=MAX_ASK_WAIT_SECONDS
        )
        permission_wait = claude.number(
            "permission_wait_seconds",
            PERMISSION_WAIT_SECONDS,
            minimum=1,
            maximum=MAX_ASK_WAIT_SECONDS,
        )
        claude.warn_unread()
        notify = talisman.section("runeconsole", "notify")
        command = notify.get("command", None)
        if command is not None and not (
            isinstance(command, list) and command and all(isinstance(a, str) for a in command)
        ):
            talisman.report(
                f"{talisman.path}: runeconsole.notify.command is {command!r}; allowed: a list "
                'of strings (the program and its arguments, e.g. [notify-send, "{title}", '
                '"{body}"])'
            )
            command = None
        urls = notify.get("urls", None)
        if urls is not None and not (
            isinstance(urls, list) and all(isinstance(u, str) and "://" in u for u in urls)
        ):
            # The URLs hold secrets (tokens, passwords): the report names none of them.
            talisman.report(
                f"{talisman.path}: runeconsole.notify.urls is not a list of Apprise URLs; "
                "allowed: a list of strings such as ntfy://my-topic or tgram://bottoken/ChatID"
            )
            urls = None
        every = notify.number("every_seconds", NOTIFY_EVERY_SECONDS, minimum=0)
        notify.warn_unread()
        budget_section = talisman.section("runeconsole", "budgets")
        limits, wrong_limits = checked_limits(budget_section.data)
        for entry in wrong_limits:
            talisman.report(f"{talisman.where('runeconsole', 'budgets')}: runeconsole.{entry}")
        enabled = RelaySettings.from_talisman(talisman).enabled
        return cls(
            window,
            wait,
            enabled,
            command,
            every,
            list(talisman.problems),
            permission_wait,
            urls or None,
            context_windows=windows,
            prices=rates,
            budgets=limits,
        )


def _stamp(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]


def load(paths: ProjectPaths) -> ClaudeSettings:
    """The settings, from the cache while the talisman is unchanged (never raises)."""
    talisman_path = os.fspath(paths.claude / TALISMAN_NAME)
    cache = os.fspath(paths.claude_bridge / CACHE_NAME)
    stamp = _stamp(talisman_path)
    try:
        with open(cache, "rb") as handle:
            saved = json.loads(handle.read(65536))
        if saved.get("format") == _FORMAT and saved.get("talisman") == stamp:
            return ClaudeSettings.from_json(saved["settings"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    settings = _read_talisman(paths)
    if stamp == _stamp(talisman_path):  # unchanged while it was read: worth keeping
        try:
            from runeconsole.core.files import atomic_write_json

            body = {"format": _FORMAT, "talisman": stamp, "settings": settings.to_json()}
            # 0600: the notify URLs in it may hold secrets from the user's own talisman.
            atomic_write_json(paths.inside(paths.claude_bridge / CACHE_NAME), body, 0o600)
        except (OSError, RuneError):  # a cache not kept is read again next time
            pass
    return settings


def notifier_for(paths: ProjectPaths) -> Notifier:
    """The project's notifier, as talisman.yml sets it (nothing set: it never sends); the
    settings are read here, from the cache, so a hook that notifies reads no YAML."""
    from runeconsole.services.notify import Notifier

    found = load(paths)
    return Notifier(paths, found.notify_command, found.notify_every_seconds, urls=found.notify_urls)


def _read_talisman(paths: ProjectPaths) -> ClaudeSettings:
    from runeconsole.core.config import Talisman

    return ClaudeSettings.from_talisman(Talisman.load(paths.root, strict=False))
