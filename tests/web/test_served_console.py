"""The served console in a real browser (Debian's Chromium through Playwright): what it
shows, and a question answered by taps alone."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.browser import PHONE, chromium, session
from tests.support.polling import wait_until
from tests.support.questions import QUESTION_DIR, ask
from tests.support.served import root_args, serving


def test_the_served_console_shows_the_agents_pane(project: Path) -> None:
    with serving(*root_args(project)) as served, chromium() as browser:
        with session(browser, served.link) as terminal:
            terminal.wait_for("Agents")
            terminal.wait_for("Questions")
            assert "token=" not in terminal.page.url  # swapped for the cookie


def test_a_question_is_answered_by_taps_on_a_phone_and_the_answer_file_is_written(
    project: Path,
) -> None:
    ask(project, text="Which parser?")
    answer = project / QUESTION_DIR / "task-1.q1.answer"
    with serving(*root_args(project)) as served, chromium() as browser:
        with session(browser, served.link, viewport=PHONE) as terminal:
            terminal.wait_for("Answer")
            terminal.tap("Answer")  # the footer's `a`
            terminal.wait_for("Which parser?")
            terminal.wait_for("Close")
            terminal.tap_button("B")
            wait_until(answer.exists, what="the answer file")
            terminal.wait_until_gone("Which parser?")
    assert json.loads(answer.read_text())["answer"].startswith("B")
