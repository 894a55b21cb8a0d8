"""``runeconsole.retention`` in talisman.yml: how long each kind of record stays live.

```yaml
runeconsole:
  retention:
    every_hours: 24                    # the console prunes this often (0: only the CLI)
    permissions: {days: 7, keep: 10000}
    questions: {days: 14, keep: 10000}
    archive: {months: 12}
```

Each kind has ``days`` (records closed longer ago than this leave the live directory) and,
for the kinds with a count, ``keep`` (at most this many closed records stay live, the
newest). ``0`` turns a rule off; both off keeps the kind forever. ``POLICIES`` is the one
table of kinds, where they live and their defaults: the retention table in
docs/protocols.md is made from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runeconsole.core.config import Talisman


@dataclass(frozen=True)
class Policy:
    """How long closed records of one kind stay live: ``days`` old at most and, when
    ``keep`` is set, no more than ``keep`` of them. ``0`` is no limit."""

    days: float = 0.0
    keep: int = 0

    def to_json(self) -> dict[str, float | int]:
        return {"days": self.days, "keep": self.keep}


@dataclass(frozen=True)
class Kind:
    """One row of the policy table."""

    name: str
    what: str
    where: str
    default: Policy
    counted: bool = True  # has a ``keep`` (a count); else days only
    archived: bool = True  # old records go to the monthly archive (else they are deleted)


POLICIES: tuple[Kind, ...] = (
    Kind(
        "permissions",
        "decided permission requests, their decisions, lock files and wait markers",
        "tmp/.rune-signals/claude-code/perm-*, .claude/state/.locks/claude-permission-*",
        Policy(7, 10_000),
    ),
    Kind(
        "questions",
        "answered or expired questions (relayed AskUserQuestion calls, Rune's rune-work "
        "directories), their answers and call locks; empty old signal directories",
        "tmp/.rune-signals/*/",
        Policy(14, 10_000),
    ),
    Kind(
        "reviews",
        "reviews of agents' changes (any file, by age)",
        ".claude/state/reviews/",
        Policy(90),
        counted=False,
    ),
    Kind(
        "merge_queue",
        "completed and failed merge-queue entries (never pending or in progress)",
        ".claude/state/merge-queue.json",
        Policy(30, 500),
    ),
    Kind(
        "tasks",
        "landed and dropped tasks (runeconsole new), with their attempts' setup and test output",
        ".claude/state/tasks/",
        Policy(30, 1_000),
    ),
    Kind(
        "signals",
        "consumed signals (the signal log)",
        ".claude/attractor/signals/processed/",
        Policy(30, 50_000),
    ),
    Kind(
        "agent_history",
        "replaced identities and hooks, saved screens of stopped agents, hand-off notes",
        ".claude/state/identities/history/, hooks/history/, supervisor/screens/, "
        "supervisor/wisdom/",
        Policy(90),
        counted=False,
    ),
    Kind(
        "cost",
        "agents' spending ledgers, by how long an agent has spent nothing (the record of "
        "what was spent: kept unless a number of days is set)",
        ".claude/state/cost/agents/",
        Policy(0),
        counted=False,
    ),
    Kind(
        "logs",
        "the hook's log and the push log, each rotated past 1 MiB; the rotated file by age",
        ".claude/state/claude/hook.log.1, .claude/state/notify.log.1",
        Policy(14),
        counted=False,
        archived=False,
    ),
    Kind(
        "notifications",
        "when each agent was last notified (entries by age)",
        ".claude/state/notify.json",
        Policy(1),
        counted=False,
        archived=False,
    ),
    Kind(
        "conversations",
        "the search index's rows of sessions whose transcript Claude Code no longer keeps, "
        "by how long it has been gone (Claude Code's own files are never deleted)",
        ".claude/state/conversations.sqlite",
        Policy(7),
        counted=False,
        archived=False,
    ),
)
KINDS = {kind.name: kind for kind in POLICIES}
ARCHIVE_MONTHS = 12
EVERY_HOURS = 24.0


@dataclass(frozen=True)
class RetentionSettings:
    policies: dict[str, Policy] = field(
        default_factory=lambda: {kind.name: kind.default for kind in POLICIES}
    )
    archive_months: int = ARCHIVE_MONTHS  # 0: archives are kept forever
    every_hours: float = EVERY_HOURS  # 0: the console never prunes on its own

    def policy(self, kind: str) -> Policy:
        return self.policies[kind]

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> RetentionSettings:
        section = talisman.section("runeconsole", "retention")
        policies = {}
        for kind in POLICIES:
            own = talisman.section("runeconsole", "retention", kind.name)
            days = own.number("days", kind.default.days, minimum=0, maximum=36500)
            keep = (
                own.integer("keep", kind.default.keep, minimum=0, maximum=10_000_000)
                if kind.counted
                else 0
            )
            own.warn_unread()
            policies[kind.name] = Policy(days, keep)
        archive = talisman.section("runeconsole", "retention", "archive")
        months = archive.integer("months", ARCHIVE_MONTHS, minimum=0, maximum=1200)
        archive.warn_unread()
        every = section.number("every_hours", EVERY_HOURS, minimum=0, maximum=24 * 365)
        section.warn_unread(*KINDS, "archive")
        return cls(policies, months, every)

    def to_json(self) -> dict[str, object]:
        return {
            "every_hours": self.every_hours,
            "archive_months": self.archive_months,
            "policies": {name: policy.to_json() for name, policy in self.policies.items()},
        }
