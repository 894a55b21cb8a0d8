"""The operator's standing permission decisions: ``.claude/state/permission-rules.json``.

```json
{"format": 1, "rules": [{"id": "r-3f9a1c2b7d", "behavior": "allow", "tool": "Bash",
  "subject": "npm test", "agent": "claude-web-1a2b3c4d", "added_at": "…"}]}
```

A rule matches a request when its tool is the request's tool exactly and its subject is
the request's subject exactly (the Bash command, the file path: no shell parsing, no
patterns, so nothing typed at the console can widen by accident), for one agent or for
all (``agent`` null). A deny wins over an allow. The hook reads the file without a lock
(it is only ever replaced whole); changes are made under its lock, written atomically.
A file that cannot be read is never overwritten: adding or removing a rule is refused,
saying why, until it is fixed by hand or moved aside.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.files import read_bytes
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services.claude.permissions.files import ALLOW, DENY, MAX_SUBJECT

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "permission-rules.json"
LOCK_NAME = "permission-rules"
FORMAT = 1
MAX_FILE = 1024 * 1024
BEHAVIORS = (ALLOW, DENY)


class Rule:
    __slots__ = ("added_at", "agent", "behavior", "id", "subject", "tool")

    def __init__(
        self, behavior: str, tool: str, subject: str, agent: str | None, added_at: str | None
    ) -> None:
        self.behavior, self.tool, self.subject = behavior, tool, subject
        self.agent, self.added_at = agent, added_at
        self.id = rule_id(behavior, tool, subject, agent)

    @classmethod
    def from_json(cls, raw: object) -> Rule:
        if not isinstance(raw, dict):
            raise ValueError("a rule is not an object")
        behavior, tool, subject = raw.get("behavior"), raw.get("tool"), raw.get("subject")
        agent, added = raw.get("agent"), raw.get("added_at")
        if behavior not in BEHAVIORS:
            raise ValueError(f"a rule's behavior is {behavior!r}, not allow or deny")
        if not isinstance(tool, str) or not tool or not isinstance(subject, str):
            raise ValueError("a rule has no tool or no subject")
        if agent is not None and not isinstance(agent, str):
            raise ValueError("a rule's agent is not a name")
        return cls(behavior, tool, subject, agent, added if isinstance(added, str) else None)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in ("id", *sorted(set(self.__slots__) - {"id"}))}

    def matches(self, tool: str, subject: str, agent: str) -> bool:
        return (
            self.tool == tool
            and self.subject == subject
            and (self.agent is None or self.agent == agent)
        )

    @property
    def scope(self) -> str:
        return self.agent or "all agents"


def rule_id(behavior: str, tool: str, subject: str, agent: str | None) -> str:
    """The same rule always has the same id (adding it twice changes nothing)."""
    import hashlib  # here: OpenSSL's start is a cost the hook pays only with rules to read

    key = json.dumps([behavior, tool, subject, agent], ensure_ascii=False).encode("utf-8")
    return "r-" + hashlib.sha256(key).hexdigest()[:10]


def rules_path(paths: ProjectPaths) -> Path:
    return paths.state / FILE_NAME


def read(paths: ProjectPaths) -> list[Rule]:
    """Every rule (``RuneError`` saying why the file cannot be used; none if it is absent)."""
    path = rules_path(paths)
    try:
        data = read_bytes(path, limit=MAX_FILE, follow_symlinks=False)
    except RuneError as exc:
        if not path.exists() and not path.is_symlink():
            return []
        raise exc
    from runeconsole.core.files import parse_json_object

    body = parse_json_object(path, data)
    raw = body.get("rules")
    if body.get("format") != FORMAT or not isinstance(raw, list):
        raise RuneError(f"{path}: unreadable: not a rules file of format {FORMAT}")
    try:
        return [Rule.from_json(item) for item in raw]
    except ValueError as exc:
        raise RuneError(f"{path}: unreadable: {exc}") from None


def decide(rules: list[Rule], tool: str, subject: str, agent: str) -> Rule | None:
    """The rule that decides a request: a matching deny, else a matching allow."""
    found = [rule for rule in rules if rule.matches(tool, subject, agent)]
    denies = [rule for rule in found if rule.behavior == DENY]
    chosen = denies or found
    return chosen[0] if chosen else None


def _write(paths: ProjectPaths, rules: list[Rule]) -> None:
    from runeconsole.core.files import atomic_write_json

    body = {"format": FORMAT, "rules": [rule.to_json() for rule in rules]}
    atomic_write_json(paths.inside(rules_path(paths)), body)


def _changed(paths: ProjectPaths, change: Callable[[list[Rule]], tuple[Rule, list[Rule]]]) -> Rule:
    from runeconsole.core.locks import locked

    with locked(paths.lock_for(LOCK_NAME), what="the permission rules", within=paths.root):
        rules = read(paths)
        result, rules = change(rules)
        _write(paths, rules)
    return result


def add(
    paths: ProjectPaths,
    behavior: str,
    tool: str,
    subject: str,
    agent: str | None,
    now: datetime,
) -> Rule:
    """The rule, added if it was not there yet (an agent of ``None``: all agents)."""
    if behavior not in BEHAVIORS:
        raise InvalidInput(f"a rule allows or denies, not {behavior!r}")
    if not tool.strip() or tool != tool.strip() or len(tool) > 200:
        raise InvalidInput(f"{tool!r} is not a tool name (Bash, Edit, …)")
    if not subject or len(subject) > MAX_SUBJECT:
        raise InvalidInput(f"a rule needs the exact command or path (1 to {MAX_SUBJECT} chars)")
    if agent is not None:
        validate_name(agent, "agent")
    wanted = Rule(behavior, tool, subject, agent, iso_z(now))

    def change(rules: list[Rule]) -> tuple[Rule, list[Rule]]:
        same = [rule for rule in rules if rule.id == wanted.id]
        return (same[0], rules) if same else (wanted, [*rules, wanted])

    return _changed(paths, change)


def remove(paths: ProjectPaths, wanted: str) -> Rule:
    """The rule of id ``wanted``, taken out (``RuneError`` when there is none)."""

    def change(rules: list[Rule]) -> tuple[Rule, list[Rule]]:
        same = [rule for rule in rules if rule.id == wanted]
        if not same:
            raise RuneError(f"no permission rule {wanted!r} (runeconsole permissions list)")
        return same[0], [rule for rule in rules if rule.id != wanted]

    return _changed(paths, change)
