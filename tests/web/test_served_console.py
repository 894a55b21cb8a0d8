"""The served console in a real browser (Debian's Chromium through Playwright): what it
shows, and a question answered by taps alone."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from runeconsole.services.claude.bridge import presence
from tests.support.browser import PHONE, session
from tests.support.claude import Bridge
from tests.support.fleet import fleet_file, project_root
from tests.support.polling import wait_until
from tests.support.questions import QUESTION_DIR, ask
from tests.support.served import Served, root_args, serving


def test_the_served_console_shows_the_agents_pane(served: Served, browser: object) -> None:
    with session(browser, served.link) as terminal:
        terminal.wait_for("Agents")
        terminal.wait_for("Questions")
        assert "token=" not in terminal.page.url  # swapped for the cookie


def test_a_question_is_answered_by_taps_on_a_phone_and_the_answer_file_is_written(
    project: Path, served: Served, browser: object
) -> None:
    ask(project, text="Which parser?")
    answer = project / QUESTION_DIR / "task-1.q1.answer"
    with session(browser, served.link, viewport=PHONE) as terminal:
        terminal.wait_for("Answer")
        terminal.tap_until("Answer", "Which parser?")  # the footer's `a`
        terminal.wait_for("Close")
        terminal.tap_button("B")
        wait_until(answer.exists, what="the answer file")
        terminal.wait_until_gone("Which parser?")
    assert json.loads(answer.read_text())["answer"].startswith("B")


def test_two_browser_sessions_racing_to_answer_one_question_make_exactly_one_answer(
    project: Path, served: Served, browser: object
) -> None:
    ask(project, text="Which parser?")
    directory = project / QUESTION_DIR
    with session(browser, served.link) as first, session(browser, served.link) as second:
        for terminal in (first, second):
            terminal.wait_for("Answer")
            terminal.tap_until("Answer", "Which parser?")
            terminal.wait_for("Close")
        # Both taps leave before either console has written anything.
        first.tap_button("A")
        second.tap_button("B")
        said_who = False  # the window that lost says whose answer stands
        deadline = time.monotonic() + 60
        while "Which parser?" in first.text() + second.text():
            assert time.monotonic() < deadline, first.text() + second.text()
            first.pump()
            said_who = said_who or "Answered by" in first.text() + second.text()
    answers = list(directory.glob("*.answer*"))
    assert [a.name for a in answers] == ["task-1.q1.answer"]
    assert json.loads(answers[0].read_text())["answer"][0] in "AB"
    assert said_who


FOREIGN_PAGE = "http://pages.example.test/"
TRY_SOCKET = """url => new Promise(done => {
    const socket = new WebSocket(url);
    socket.onopen = () => { socket.close(); done("open"); };
    socket.onerror = () => done("refused");
})"""


def test_a_page_of_another_origin_cannot_open_the_consoles_websocket(
    served: Served, browser: object
) -> None:
    socket_url = served.url.replace("http://", "ws://") + "ws"
    with session(browser, served.link) as terminal:  # this browser has the cookie now
        terminal.wait_for("Agents")
        context = terminal.page.context
        context.route(FOREIGN_PAGE, lambda route: route.fulfill(body="<p>elsewhere</p>"))
        foreign = context.new_page()
        foreign.goto(FOREIGN_PAGE)
        assert foreign.evaluate(TRY_SOCKET, socket_url) == "refused"
        assert terminal.page.evaluate(TRY_SOCKET, socket_url) == "open"  # its own page may


def test_a_fleet_is_served_too_and_its_token_kept_in_the_users_state_directory(
    tmp_path: Path, browser: object, private_state_home: Path
) -> None:
    fleet = fleet_file(tmp_path, {"name": "here", "root": project_root(tmp_path, "p", "alpha")})
    with serving("--fleet", str(fleet), "--no-monitor") as served:
        token_file = private_state_home / "runeconsole" / "serve-token"
        assert token_file.read_text().strip() == served.token
        with session(browser, served.link) as terminal:
            terminal.wait_for("Sources")
            terminal.wait_for("alpha")


def test_stopping_the_server_ends_every_sessions_console_and_its_record(
    project: Path, browser: object
) -> None:
    record = project / ".claude" / "state" / "serve.json"
    with serving(*root_args(project)) as served, session(browser, served.link) as terminal:
        terminal.wait_for("Agents")
        assert json.loads(record.read_text())["url"] == served.url
        group = str(served.process.pid)  # the server leads its session: its consoles are in it
        assert len(processes_in_session(group)) >= 2
        began = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=30) == 0
        assert time.monotonic() - began < 15
        wait_until(lambda: not processes_in_session(group), what="no console left")
    assert not record.exists()


def processes_in_session(session_id: str) -> list[str]:
    found = subprocess.run(["pgrep", "-s", session_id], capture_output=True, text=True)
    return found.stdout.split()


def test_two_browser_sessions_racing_on_one_permission_make_exactly_one_decision(
    hooked: Bridge, served: Served, browser: object
) -> None:
    hooked.send("SessionStart")  # the served project is the hooked one
    with session(browser, served.link) as first, session(browser, served.link) as second:
        for terminal in (first, second):
            terminal.wait_for("Agents")
        wait_until(lambda: presence.console_open(hooked.paths), what="a console open")
        done = hooked.send_later("PermissionRequest-Bash")
        for terminal in (first, second):
            terminal.wait_for("Answer")  # the footer's `a` decides permissions too
            terminal.tap_until("Answer", "Always allow")
        first.tap_button("Allow")
        second.tap_button("Deny")
        wait_until(lambda: "result" in done, what="the hook's answer")
    decisions = list((hooked.project / "tmp" / ".rune-signals").rglob("*.decision"))
    assert len(decisions) == 1
    printed = done["result"].output["hookSpecificOutput"]["decision"]  # type: ignore[index]
    assert printed["behavior"] in ("allow", "deny")
