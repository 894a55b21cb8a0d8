"""``runeconsole.merge_queue`` in talisman.yml."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from runeconsole.adapters import git_remote as gr
from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.config import Section, Talisman
from runeconsole.services.merge_queue.model import command_args

T = TypeVar("T")

AUTO = "auto"
DEFAULT_TEST_TIMEOUT = 900.0
START_SLOTS = 2  # ``parallel_runs: auto`` until a test run has been measured


@dataclass(frozen=True)
class MergeQueueSettings:
    """``runeconsole.merge_queue`` in talisman.yml."""

    test_command: list[str] | None = None
    test_timeout: float = DEFAULT_TEST_TIMEOUT
    test_timeout_auto: bool = False  # ``test_timeout_seconds: auto``: from recent green runs
    git_timeout: float = 300.0
    max_rebase_rounds: int = 3
    keep_branch: bool = False
    on_interrupted: str = "retry"  # re-run an interrupted entry once; "fail": never
    max_attempts: int = 3
    main_branch: str = "main"
    predict_limit: int = 0  # 0: every pending entry
    answer_guardian_signals: bool = False  # act on MERGE_READY sent to the harness's guardian
    batch_max: int = 8  # entries rebased one on the next and tested once, at the tip
    batch_wait_seconds: float = 0.0  # how long a partial batch waits for company
    parallel_runs: int = START_SLOTS  # test slots: the next batch tests on top of the one ahead
    parallel_runs_auto: bool = False  # ``auto``: slots from the tests' measured CPU share
    flaky_retries: int = 1  # an entry failing alone runs again this many times
    aging_minutes: float = 30.0  # waiting this long raises an entry's priority one level
    remote: str | None = None  # land on this remote's main_branch (unset: the local one)
    delete_remote_branch: bool = False  # a remote entry's branch is deleted once landed
    remote_timeout: float = 120.0  # seconds a fetch or a push may take
    remote_retry_seconds: float = 2.0  # the first wait for an unreachable remote, doubling
    remote_retry_max_seconds: float = 60.0  # the longest of those waits
    remote_wait_seconds: float = 900.0  # a run waits this long for the remote, then stops

    @property
    def sequential(self) -> bool:
        """One entry at a time, nothing speculative: the queue as it first was."""
        return self.batch_max == 1 and self.parallel_runs == 1 and not self.parallel_runs_auto

    @property
    def target(self) -> str:
        """Where the queue lands, in words: ``origin/main``, or ``main``."""
        return f"{self.remote}/{self.main_branch}" if self.remote else self.main_branch

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> MergeQueueSettings:
        section = talisman.section("runeconsole", "merge_queue")
        raw = section.get("test_command", None)
        command = command_args(raw) if raw is not None else None
        if raw is not None and command is None:
            where = section.where("test_command")
            talisman.report(
                f"{where}: runeconsole.merge_queue.test_command is {raw!r}; "
                "allowed: a command line (quotes balanced) or a list of strings"
            )
        main = section.text("main_branch", "main") or "main"
        if not gw.valid_branch_name(main):
            where = section.where("main_branch")
            talisman.report(f"{where}: runeconsole.merge_queue.main_branch {main!r}")
            main = "main"
        timeout, auto = _timeout(section)
        runs, runs_auto = _parallel_runs(section)
        remote = section.text("remote", "") or None
        if remote is not None and not gr.valid_remote_name(remote):
            where = section.where("remote")
            talisman.report(
                f"{where}: runeconsole.merge_queue.remote {remote!r} is not a remote name "
                "(e.g. origin); the queue lands on the local branch"
            )
            remote = None
        settings = cls(
            test_command=command,
            test_timeout=timeout,
            test_timeout_auto=auto,
            git_timeout=section.number("git_timeout_seconds", 300.0, minimum=1),
            max_rebase_rounds=section.integer("max_rebase_rounds", 3, minimum=1, maximum=20),
            keep_branch=section.boolean("keep_branch", False),
            on_interrupted=section.choice("on_interrupted", "retry", ("retry", "fail")),
            max_attempts=section.integer("max_attempts", 3, minimum=1, maximum=100),
            main_branch=main,
            predict_limit=section.integer("predict_limit", 0, minimum=0, maximum=100000),
            answer_guardian_signals=section.boolean("answer_guardian_signals", False),
            batch_max=section.integer("batch_max", 8, minimum=1, maximum=256),
            batch_wait_seconds=section.number("batch_wait_seconds", 0.0, minimum=0, maximum=86400),
            parallel_runs=runs,
            parallel_runs_auto=runs_auto,
            flaky_retries=section.integer("flaky_retries", 1, minimum=0, maximum=10),
            aging_minutes=section.number("aging_minutes", 30.0, minimum=0.1, maximum=100000),
            remote=remote,
            delete_remote_branch=section.boolean("delete_remote_branch", False),
            remote_timeout=section.number("remote_timeout_seconds", 120.0, minimum=1),
            remote_retry_seconds=section.number(
                "remote_retry_seconds", 2.0, minimum=0.05, maximum=3600
            ),
            remote_retry_max_seconds=section.number(
                "remote_retry_max_seconds", 60.0, minimum=0.05, maximum=86400
            ),
            remote_wait_seconds=section.number(
                "remote_wait_seconds", 900.0, minimum=0, maximum=7 * 86400
            ),
        )
        section.warn_unread()
        return settings


def _timeout(section: Section) -> tuple[float, bool]:
    """``test_timeout_seconds``: (seconds, False), or ``auto``: (the limit until the history
    holds enough green runs, True)."""
    return _or_auto(
        section,
        "test_timeout_seconds",
        given=DEFAULT_TEST_TIMEOUT,
        auto=DEFAULT_TEST_TIMEOUT,
        bad=(DEFAULT_TEST_TIMEOUT, False),
        allowed="a number >= 1",
        read=lambda: section.number("test_timeout_seconds", DEFAULT_TEST_TIMEOUT, minimum=1),
    )


def _parallel_runs(section: Section) -> tuple[int, bool]:
    """``parallel_runs``: (slots, False), or ``auto`` (the default): (the slots until a
    test run has been measured, True)."""
    return _or_auto(
        section,
        "parallel_runs",
        given=AUTO,
        auto=START_SLOTS,
        bad=(START_SLOTS, True),
        allowed="a whole number from 1 to 64",
        read=lambda: section.integer("parallel_runs", START_SLOTS, minimum=1, maximum=64),
    )


def _or_auto(
    section: Section,
    name: str,
    *,
    given: object,
    auto: T,
    bad: tuple[T, bool],
    allowed: str,
    read: Callable[[], T],
) -> tuple[T, bool]:
    """A setting that is a value (``read``) or ``auto``: (the value, False), or (``auto``'s
    starting value, True); ``given`` when unset, ``bad`` (reported) for another word."""
    raw = section.get(name, given)
    if raw == AUTO:
        return auto, True
    if isinstance(raw, str):
        section.talisman.report(
            f"{section.where(name)}: runeconsole.merge_queue.{name} is {raw!r}; "
            f"allowed: {allowed}, or auto"
        )
        return bad
    return read(), False
