"""How alive an agent is, judged from its identity file: the colours, the thresholds
(``runeconsole.*`` in talisman.yml), and one identity file as read with its liveness.

Green while the last heartbeat is younger than the heartbeat interval x the green
multiplier, yellow until the stale threshold, red when stale or crashed, grey when
terminated. ``last_seen`` and ``last_heartbeat`` are the same instant under two names
(the harness writes one, we write both); the newer counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from runeconsole.core.config import Talisman
from runeconsole.core.timeutil import parse_iso

# The statuses' home is identity_fields (the hook reads them without this module's imports).
from runeconsole.services.identity_fields import ACTIVE as ACTIVE
from runeconsole.services.identity_fields import CRASHED as CRASHED
from runeconsole.services.identity_fields import TERMINATED as TERMINATED

if TYPE_CHECKING:
    from runeconsole.services.identity_fields import AgentMetadata

GREEN, YELLOW, RED, GREY = "green", "yellow", "red", "grey"
HEARTBEAT_FIELDS = frozenset({"last_seen", "last_heartbeat"})  # one moment, two names
_UNPARSED = object()
LIVENESS_ORDER = (RED, YELLOW, GREEN, GREY)


@dataclass(frozen=True)
class LivenessSettings:
    heartbeat_interval: float = 60.0
    stale_after: float = 300.0
    green_multiplier: float = 2.0

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> LivenessSettings:
        section = talisman.section("runeconsole")
        interval = section.number("heartbeat_interval_seconds", 60.0, minimum=1)
        multiplier = section.number("green_multiplier", 2.0, minimum=1)
        stale = section.number("stale_after_seconds", 300.0, minimum=1)
        if stale <= interval * multiplier:  # else an agent would go from green straight to red
            where = section.where("stale_after_seconds")
            talisman.report(
                f"{where}: runeconsole.stale_after_seconds ({stale:g}) must be more than "
                f"heartbeat_interval_seconds x green_multiplier ({interval * multiplier:g})"
            )
            defaults = cls()
            interval, stale = defaults.heartbeat_interval, defaults.stale_after
            multiplier = defaults.green_multiplier
        # read by their own loaders
        section.warn_unread(
            "tmux",
            "supervisor",
            "merge_queue",
            "claude",
            "notify",
            "budgets",
            "review",
            "worktrees",
            "background",
            "agents",
            "retention",
        )
        return cls(interval, stale, multiplier)

    @property
    def green_below(self) -> float:
        return self.heartbeat_interval * self.green_multiplier


def last_seen(fields: dict[str, Any]) -> Any:
    """The newer of ``last_seen`` and ``last_heartbeat`` (the same instant, two names)."""
    seen, beat = fields.get("last_seen"), fields.get("last_heartbeat")
    if seen == beat:  # as we write them: one moment, parsed once (every file of a load)
        moment = parse_iso(seen)
        return moment if moment is not None else parse_iso(fields.get("created_at"))
    known = [m for m in (parse_iso(seen), parse_iso(beat)) if m is not None]
    return max(known) if known else parse_iso(fields.get("created_at"))


def judge(fields: dict[str, Any], now: Any, settings: LivenessSettings) -> tuple[str, float | None]:
    """Liveness colour and heartbeat age (seconds) of one identity at ``now``."""
    return judge_seen(last_seen(fields), fields.get("status"), now, settings)


def judge_seen(
    seen: Any, status: Any, now: Any, settings: LivenessSettings
) -> tuple[str, float | None]:
    """``judge`` with the last-seen moment already parsed (records parse it once)."""
    age = (now - seen).total_seconds() if seen is not None else None
    if status == TERMINATED:
        return GREY, age
    if status == CRASHED or age is None:
        return RED, age
    if age < -settings.heartbeat_interval:
        return YELLOW, age  # a heartbeat from the future: a skewed clock cannot vouch for it
    if age < settings.green_below:
        return GREEN, age
    if age < settings.stale_after:
        return YELLOW, age
    return RED, age


def _besides_heartbeat(fields: dict[str, Any]) -> int:
    """How many fields there are besides the heartbeat's moment."""
    return len(fields) - sum(name in fields for name in HEARTBEAT_FIELDS)


@dataclass
class AgentRecord:
    """One identity file as read: every field kept, plus what we derive from it."""

    key: str
    location: str
    fields: dict[str, Any] = field(default_factory=dict)
    liveness: str = RED
    age_seconds: float | None = None
    error: str | None = None
    _seen: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._seen = _UNPARSED

    @property
    def path(self) -> Path:
        return Path(self.location)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def status(self) -> str:
        return "unreadable" if self.error else str(self.fields.get("status") or "?")

    @property
    def worktree(self) -> str | None:
        return self.fields.get("worktree_path") or self.fields.get("worktree")

    def worktree_in(self, root: Path) -> Path | None:
        """The worktree as a path: a relative one (the harness writes
        ``.claude/worktrees/impl_auth``) is under the project ``root``, wherever the
        command runs."""
        value = self.worktree
        if not isinstance(value, str) or not value:
            return None
        path = Path(value).expanduser()
        return path if path.is_absolute() else root / path

    @property
    def metadata(self) -> AgentMetadata:
        """The ``metadata`` object, or an empty one when a hand-edited file holds something else."""
        metadata = self.fields.get("metadata")
        return cast("AgentMetadata", metadata) if isinstance(metadata, dict) else {}

    @property
    def seen(self) -> Any:
        """The last-seen moment (``last_seen`` / ``last_heartbeat``, else ``created_at``),
        parsed once: the fields of a record never change after it is read."""
        if self._seen is _UNPARSED:
            self._seen = last_seen(self.fields)
        return self._seen

    def rejudge(self, now: Any, settings: LivenessSettings) -> bool:
        """Recompute liveness at ``now``; True if the colour changed."""
        if self.error:
            return False
        before = self.liveness
        self.liveness, self.age_seconds = judge_seen(
            self.seen, self.fields.get("status"), now, settings
        )
        return before != self.liveness

    def age_at(self, now: Any) -> float | None:
        """Seconds since the agent was last seen, at ``now``."""
        seen = self.seen
        return None if seen is None or self.error else (now - seen).total_seconds()

    def next_change(self, settings: LivenessSettings) -> Any:
        """The moment this record's colour next changes with no new file (a silent agent
        turning yellow, then red), or None when only a new file can change it."""
        seen = self.seen
        if self.error or seen is None or self.fields.get("status") in (CRASHED, TERMINATED):
            return None
        age = self.age_seconds
        for threshold in (-settings.heartbeat_interval, settings.green_below, settings.stale_after):
            if age is None or age < threshold:
                return seen + timedelta(seconds=threshold)
        return None

    def beat_of(self, before: AgentRecord | None) -> bool:
        """This is ``before`` read again after a heartbeat and nothing else: every field
        the same but the heartbeat's moment, which moved on within the same local day,
        and the same colour. Only its age moved; what is worked out from the rest stands
        (problems, spending: a budget's state is of the day its agent was last seen, and a
        hold noted just after midnight shows with the first heartbeat of the new day)."""
        if before is None or before.error or self.error or before.liveness != self.liveness:
            return False
        old, new = before.fields, self.fields
        if _besides_heartbeat(old) != _besides_heartbeat(new):  # a field came or went
            return False
        for name, value in new.items():
            if name not in HEARTBEAT_FIELDS and old.get(name, _UNPARSED) != value:
                return False
        then, now = before.seen, self.seen
        if then is None or now is None or now < then:
            return False
        return bool(now.astimezone().date() == then.astimezone().date())

    def to_json(self) -> dict[str, Any]:
        if self.error:
            return {"key": self.key, "liveness": RED, "error": self.error}
        age = None if self.age_seconds is None else round(self.age_seconds, 1)
        return {**self.fields, "key": self.key, "liveness": self.liveness, "age_seconds": age}

    @classmethod
    def from_json(cls, row: dict[str, Any], key: str, location: str = "") -> AgentRecord:
        """A record as ``to_json`` wrote it (an ``events`` row from another source), under
        the ``key`` the reader knows it by; the colour is the writer's until rejudged."""
        derived = ("key", "liveness", "age_seconds", "phase")
        if row.get("error"):
            return cls(key, location, error=str(row["error"]))
        fields = {name: value for name, value in row.items() if name not in derived}
        age = row.get("age_seconds")
        liveness = row.get("liveness")
        return cls(
            key,
            location,
            fields,
            liveness=liveness if liveness in LIVENESS_ORDER else RED,
            age_seconds=float(age) if isinstance(age, int | float) else None,
        )
