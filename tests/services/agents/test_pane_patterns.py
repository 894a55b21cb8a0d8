"""Pane patterns against sample Claude Code screens in tests/panes/."""

from __future__ import annotations

import pytest

from runeconsole.services.pane_patterns import read_pane, safe_to_type
from tests.support.paths import PANES

# sample: (context_left, compacting, waiting_for_input, prompt starts with, phase)
EXPECTED = {
    "working_context_low": (12, False, None, None, "implementation"),
    "permission_bash": (None, False, "permission", "Do you want to proceed?", "implementation"),
    "permission_edit": (None, False, "permission", "Do you want to make this edit", None),
    "question_ask": (None, False, "question", "Which database", None),
    "numbered_choice": (None, False, "choice", "Select an option", None),
    "compacting": (2, True, None, None, "testing"),
    "precompact_hook": (None, True, None, None, "testing"),
    "context_low_new": (7, False, None, None, "implementation"),
    "idle_testing": (None, False, None, None, "testing"),
    "answered_permission_scrolled": (41, False, None, None, "investigation"),
    "plan_mode": (None, False, None, None, "planning"),
    "idle_asked_in_text": (33, False, "question", "The migration ran cleanly", None),
    # The real Claude Code 2.1.328 (python -m tests.support.claude_binary capture)
    "claude_question_dialog": (None, False, "question", "Which hash should the auth", None),
    "claude_permission_prompt": (None, False, "permission", "Do you want to proceed?", None),
    "claude_busy": (None, False, None, None, None),
    "claude_idle": (None, False, None, None, None),
    "claude_trust_folder": (None, False, "choice", "Claude Code asks to trust this folder", None),
}


def test_every_sample_has_an_expectation() -> None:
    assert {path.stem for path in PANES.glob("*.txt")} == set(EXPECTED)


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_sample_pane(sample: str) -> None:
    context, compacting, waiting, prompt, phase = EXPECTED[sample]
    reading = read_pane((PANES / f"{sample}.txt").read_text(encoding="utf-8"))
    assert reading.context_left == context
    assert reading.compacting is compacting
    assert reading.waiting_for_input == waiting
    if prompt is None:
        assert reading.prompt is None
    else:
        assert reading.prompt is not None and reading.prompt.startswith(prompt)
    if phase is not None:
        assert reading.phase == phase


def test_the_real_binarys_busy_screen_is_busy() -> None:
    assert read_pane((PANES / "claude_busy.txt").read_text()).busy
    assert not read_pane((PANES / "claude_idle.txt").read_text()).busy


def test_a_newer_assistant_block_marked_with_a_dot_ends_an_older_prompt() -> None:
    """2.1.328 marks assistant blocks with ●: what is above the last one is history."""
    dialog = (PANES / "claude_question_dialog.txt").read_text()
    answered = dialog.replace("Enter to select", "") + "\n● Noted: argon2 it is.\n"
    reading = read_pane(answered)
    assert reading.waiting_for_input is None and not reading.menu
    asked = read_pane((PANES / "claude_idle.txt").read_text() + "\n● Shall I add tests too?\n")
    assert (asked.waiting_for_input, asked.prompt) == ("question", "Shall I add tests too?")


def test_busy_agent_is_not_waiting_even_with_a_question_in_view() -> None:
    reading = read_pane((PANES / "answered_permission_scrolled.txt").read_text())
    assert reading.busy
    assert reading.waiting_for_input is None


def test_explicit_phase_line_wins_over_tool_calls_and_is_marked() -> None:
    screen = "⏺ Phase: testing — parser\n\n⏺ Read(src/parser.py)\n  ⎿  Done\n"
    reading = read_pane(screen)
    assert (reading.phase, reading.phase_explicit) == ("investigation", False)
    reading = read_pane(screen + "⏺ Phase: completion\n")
    assert (reading.phase, reading.phase_explicit) == ("completion", True)


def test_latest_context_figure_counts() -> None:
    screen = "Context left until auto-compact: 40%\n...\nContext low (8% remaining)\n"
    assert read_pane(screen).context_left == 8


def test_empty_screen_says_nothing() -> None:
    reading = read_pane("")
    assert reading.context_left is None
    assert reading.waiting_for_input is None
    assert reading.phase is None
    assert not reading.compacting


# sample: (menu: Enter would choose an option, Esc says it declines or cancels)
MENUS = {
    "permission_bash": (True, True),
    "permission_edit": (True, True),
    "question_ask": (True, True),
    "numbered_choice": (True, False),
    "idle_asked_in_text": (False, False),  # asked in prose: the input box is free
    "answered_permission_scrolled": (False, False),
    "working_context_low": (False, False),
    "claude_question_dialog": (True, True),
    "claude_permission_prompt": (True, True),
    "claude_busy": (False, False),
    "claude_idle": (False, False),
    "claude_trust_folder": (True, True),  # Enter would pick "No, exit"
}


@pytest.mark.parametrize("sample", sorted(MENUS))
def test_typing_is_safe_only_where_enter_chooses_nothing(sample: str) -> None:
    reading = read_pane((PANES / f"{sample}.txt").read_text(encoding="utf-8"))
    assert (reading.menu, reading.esc_declines) == MENUS[sample]
    assert safe_to_type(reading) is not MENUS[sample][0]


def test_nothing_on_screen_is_not_yet_safe_to_type() -> None:
    assert not safe_to_type(read_pane("\n\n"))
