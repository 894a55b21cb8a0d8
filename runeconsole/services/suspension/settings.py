"""``context_preservation`` in talisman.yml."""

from __future__ import annotations

from dataclasses import dataclass

from runeconsole.core.config import Talisman

# Keys the Rune plugin documents for its workers that runeconsole has no use for: known,
# so a talisman shared with the plugin draws no warning.
DOCUMENTED_UNUSED = ("timeout_warning_seconds",)


@dataclass(frozen=True)
class SuspensionSettings:
    enabled: bool = True
    max_resume_count: int = 2
    context_truncate_chars: int = 4000
    stash_on_suspend: bool = True
    integrity_check: bool = True

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> SuspensionSettings:
        section = talisman.section("context_preservation")
        settings = cls(
            enabled=section.boolean("enabled", True),
            max_resume_count=section.integer("max_resume_count", 2, minimum=0, maximum=100),
            context_truncate_chars=section.integer(
                "context_truncate_chars", 4000, minimum=1, maximum=1_000_000
            ),
            stash_on_suspend=section.boolean("stash_on_suspend", True),
            integrity_check=section.boolean("integrity_check", True),
        )
        section.warn_unread(*DOCUMENTED_UNUSED)
        return settings
