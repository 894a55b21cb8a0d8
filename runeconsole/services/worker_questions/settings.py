"""``question_relay`` in talisman.yml, and the limits on a timeout."""

from __future__ import annotations

from dataclasses import dataclass

from runeconsole.core.config import Talisman
from runeconsole.core.errors import InvalidInput

DEFAULT_TIMEOUT_SECONDS = 120.0  # the Rune plugin's own default
MAX_TIMEOUT_SECONDS = 7 * 24 * 3600  # a week: beyond that nobody is waiting for the answer


@dataclass(frozen=True)
class RelaySettings:
    enabled: bool = True
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    poll_interval_seconds: float = 15.0
    auto_answer_on_timeout: bool = True
    max_questions_per_worker: int = 3

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> RelaySettings:
        section = talisman.section("question_relay")
        settings = cls(
            enabled=section.boolean("enabled", True),
            timeout_seconds=section.number(
                "timeout_seconds", DEFAULT_TIMEOUT_SECONDS, minimum=1, maximum=MAX_TIMEOUT_SECONDS
            ),
            poll_interval_seconds=section.number("poll_interval_seconds", 15.0, minimum=1),
            auto_answer_on_timeout=section.boolean("auto_answer_on_timeout", True),
            max_questions_per_worker=section.integer("max_questions_per_worker", 3, minimum=1),
        )
        section.warn_unread()
        return settings


def validate_timeout(seconds: float) -> float:
    if not 0 < seconds <= MAX_TIMEOUT_SECONDS:  # also false for nan
        raise InvalidInput(
            f"--timeout must be more than 0 and at most {MAX_TIMEOUT_SECONDS} seconds"
        )
    return seconds
