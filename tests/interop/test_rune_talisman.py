"""The talisman as the Rune plugin reads it: the user's
``${CLAUDE_CONFIG_DIR:-~/.claude}/talisman.yml`` under the project's, the plugin's own
defaults, and the keys it documents that runeconsole has no use for."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.core.config import Talisman
from runeconsole.core.errors import RuneError
from runeconsole.services.suspension import SuspensionSettings
from runeconsole.services.worker_questions import RelaySettings

# Sections as the plugin's documentation shows them, in a user's global talisman.
USER_TALISMAN = """\
version: 1
rune-gaze:
  backend_extensions: [.py, .go]
question_relay:
  enabled: true
  timeout_seconds: 300
  poll_interval_seconds: 15
  auto_answer_on_timeout: true
  max_questions_per_worker: 5
context_preservation:
  enabled: true
  timeout_warning_seconds: 60
  max_resume_count: 2
  context_truncate_chars: 4000
  stash_on_suspend: true
  integrity_check: true
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_project_talisman_wins_key_by_key_over_the_users(
    project: Path, private_claude_config: Path
) -> None:
    write(private_claude_config / "talisman.yml", USER_TALISMAN)
    write(project / ".claude" / "talisman.yml", "question_relay:\n  timeout_seconds: 60\n")

    talisman = Talisman.load(project)
    relay = RelaySettings.from_talisman(talisman)

    assert relay.timeout_seconds == 60  # the project's
    assert relay.max_questions_per_worker == 5  # the user's, the project says nothing
    assert talisman.where("question_relay", "timeout_seconds") == project / ".claude/talisman.yml"
    assert talisman.where("question_relay", "max_questions_per_worker") == (
        private_claude_config / "talisman.yml"
    )


def test_the_users_talisman_alone_is_read(project: Path, private_claude_config: Path) -> None:
    write(private_claude_config / "talisman.yml", USER_TALISMAN)
    assert RelaySettings.from_talisman(Talisman.load(project)).timeout_seconds == 300


def test_the_plugins_default_timeout_is_120_seconds(project: Path) -> None:
    assert RelaySettings.from_talisman(Talisman.load(project)).timeout_seconds == 120


def test_keys_the_plugin_documents_draw_no_warning(project: Path, private_claude_config) -> None:
    write(private_claude_config / "talisman.yml", USER_TALISMAN)
    write(project / ".claude" / "talisman.yml", USER_TALISMAN.replace("300", "90"))
    talisman = Talisman.load(project)
    RelaySettings.from_talisman(talisman)
    SuspensionSettings.from_talisman(talisman)
    assert talisman.warnings == [] and talisman.problems == []


def test_a_typo_still_draws_one_naming_the_file_it_is_in(
    project: Path, private_claude_config: Path
) -> None:
    user = write(private_claude_config / "talisman.yml", "question_relay:\n  timout_seconds: 9\n")
    talisman = Talisman.load(project)
    RelaySettings.from_talisman(talisman)
    assert talisman.warnings == [
        f"{user}: question_relay.timout_seconds is not a setting (known: auto_answer_on_timeout, "
        "enabled, max_questions_per_worker, poll_interval_seconds, timeout_seconds); ignored"
    ]


def test_a_bad_value_is_reported_in_the_file_that_holds_it(
    project: Path, private_claude_config: Path, cli
) -> None:
    user = write(
        private_claude_config / "talisman.yml", "question_relay:\n  timeout_seconds: soon\n"
    )
    write(project / ".claude" / "talisman.yml", "question_relay:\n  enabled: true\n")
    with pytest.raises(RuneError, match=f"{user}: question_relay.timeout_seconds is 'soon'"):
        RelaySettings.from_talisman(Talisman.load(project))
    result = cli("question", "list", "--root", str(project))
    assert result.code == 1 and str(user) in result.err


def test_an_unreadable_user_talisman_is_reported_not_fatal_to_the_console(
    project: Path, private_claude_config: Path
) -> None:
    user = write(private_claude_config / "talisman.yml", "question_relay: [\n")
    talisman = Talisman.load(project, strict=False)
    assert talisman.problems and talisman.problems[0].startswith(f"{user}: not valid YAML")
    assert RelaySettings.from_talisman(talisman).timeout_seconds == 120
