"""``runeconsole.merge_queue`` in talisman.yml."""

from __future__ import annotations

from dataclasses import dataclass

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.config import Talisman
from runeconsole.services.merge_queue.model import command_args


@dataclass(frozen=True)
class MergeQueueSettings:
    """``runeconsole.merge_queue`` in talisman.yml."""

    test_command: list[str] | None = None
    test_timeout: float = 900.0
    git_timeout: float = 300.0
    max_rebase_rounds: int = 3
    keep_branch: bool = False
    on_interrupted: str = "retry"  # re-run an interrupted entry once; "fail": never
    max_attempts: int = 3
    main_branch: str = "main"
    predict_limit: int = 0  # 0: every pending entry
    answer_guardian_signals: bool = False  # act on MERGE_READY sent to the harness's guardian

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
        settings = cls(
            test_command=command,
            test_timeout=section.number("test_timeout_seconds", 900.0, minimum=1),
            git_timeout=section.number("git_timeout_seconds", 300.0, minimum=1),
            max_rebase_rounds=section.integer("max_rebase_rounds", 3, minimum=1, maximum=20),
            keep_branch=section.boolean("keep_branch", False),
            on_interrupted=section.choice("on_interrupted", "retry", ("retry", "fail")),
            max_attempts=section.integer("max_attempts", 3, minimum=1, maximum=100),
            main_branch=main,
            predict_limit=section.integer("predict_limit", 0, minimum=0, maximum=100000),
            answer_guardian_signals=section.boolean("answer_guardian_signals", False),
        )
        section.warn_unread()
        return settings
