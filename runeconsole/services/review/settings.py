"""``runeconsole.review`` in talisman.yml."""

from __future__ import annotations

from dataclasses import dataclass

from runeconsole.core.config import Talisman


@dataclass(frozen=True)
class ReviewSettings:
    """How often an agent's changes are computed again, and how much a review shows."""

    refresh_seconds: float = 10.0  # at most once per this many seconds per agent
    max_commits: int = 200  # commits ahead listed (all are counted)
    context_lines: int = 3  # around each change in the diff

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> ReviewSettings:
        section = talisman.section("runeconsole", "review")
        settings = cls(
            refresh_seconds=section.number("refresh_seconds", 10.0, minimum=1, maximum=3600),
            max_commits=section.integer("max_commits", 200, minimum=1, maximum=100_000),
            context_lines=section.integer("context_lines", 3, minimum=0, maximum=100),
        )
        section.warn_unread()
        return settings
