"""An MCP server's Elicitation relayed to the console: the waiting hook's request is a row
of the Questions pane, ``a`` opens its form (built from the schema), and what is accepted
or declined reaches Claude Code as its Elicitation hook output. The hook runs through the
hook-runner double and the installed command, as Claude Code runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, Switch

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.core.paths import ProjectPaths
from runeconsole.demo.claude_scene import ELICIT_TASK, elicitation_request
from runeconsole.demo.scene import build_scene
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.elicitation_modal import ElicitationModal
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from tests.support.claude import KEY, Bridge, in_thread
from tests.support.paths import SNAP
from tests.support.polling import until

pytestmark = pytest.mark.timeout(120)


def form_open(app: object) -> bool:
    """The form's window is on screen with its fields (composed, not only pushed)."""
    screen = app.screen  # type: ignore[attr-defined]
    return isinstance(screen, ElicitationModal) and bool(screen.query("#field-0"))


async def form_asked(
    app: RuneConsole, pilot: Pilot, hooked: Bridge
) -> tuple[dict, LocalQuestionsPane]:
    """A session asks for the fixture's form (its hook waiting, in a thread); ``a`` opens
    it. The hook's result lands in the dict returned."""
    await until(pilot, lambda: app.presence.held)
    await in_thread(lambda: hooked.send("SessionStart"))
    done = hooked.send_later("Elicitation")
    pane = app.query_one(LocalQuestionsPane)
    await until(pilot, lambda: len(pane.records) == 1)
    await pilot.press("a")
    await until(pilot, lambda: form_open(app))
    return done, pane


def output(done: dict) -> dict:
    result = done["result"]
    assert result.errors == [] and result.exit_code == 0, result
    return result.output["hookSpecificOutput"]


async def test_the_form_is_filled_checked_and_accepted_with_typed_values(hooked: Bridge) -> None:
    app = create_app(hooked.project, rescan_seconds=60)
    async with app.run_test(size=(100, 40)) as pilot:
        done, pane = await form_asked(app, pilot, hooked)
        (question,) = pane.records.values()
        assert question.text == "Where should this deploy go?" and question.worker == KEY
        modal = app.screen
        assert isinstance(modal, ElicitationModal)
        branch, replicas = modal.query_one("#field-0", Input), modal.query_one("#field-1", Input)
        assert isinstance(modal.query_one("#field-2"), Switch)
        assert modal.query_one("#field-2", Switch).value is True  # the schema's default
        assert app.focused is branch
        await pilot.press(*"main", "enter")  # enter moves on, sends nothing
        assert app.focused is replicas and "result" not in done
        await pilot.press(*"12")
        await pilot.press("ctrl+s")
        await pilot.pause()
        note = str(modal.query_one("#question-note").render())
        assert "above the maximum 9" in note and "result" not in done  # nothing sent
        replicas.value = "3"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "Region" in str(modal.query_one("#question-note").render())  # required
        modal.query_one("#field-3", Select).value = "us"
        modal.query_one("#field-2", Switch).value = False
        await pilot.click("#form-accept")
        await until(pilot, lambda: "result" in done)
        assert output(done) == {
            "hookEventName": "Elicitation",
            "action": "accept",
            "content": {"branch": "main", "replicas": 3, "canary": False, "region": "us"},
        }
        await until(pilot, lambda: not isinstance(app.screen, ElicitationModal))
        await until(pilot, lambda: not pane.records)


async def test_decline_tells_the_server_no(hooked: Bridge) -> None:
    app = create_app(hooked.project, rescan_seconds=60)
    async with app.run_test(size=(100, 40)) as pilot:
        done, _ = await form_asked(app, pilot, hooked)
        await pilot.click("#form-decline")
        await until(pilot, lambda: "result" in done)
        assert output(done) == {"hookEventName": "Elicitation", "action": "decline"}


def test_the_cli_answers_a_form_by_its_fields(hooked: Bridge, cli) -> None:  # type: ignore[no-untyped-def]
    hooked.send("SessionStart")
    hooked.open_console()
    done = hooked.send_later("Elicitation")
    root = str(hooked.project)
    from tests.support.polling import wait_until

    listed = wait_until(
        lambda: cli("question", "list", "--json", "--root", root).json(), 30, every=0.1
    )
    question_id = listed[0]["id"]
    wrong = cli("question", "answer", question_id, "--option", "A", "--root", root)
    assert wrong.code != 0 and "is a form" in wrong.err
    missing = cli("question", "answer", question_id, "--field", "branch=main", "--root", root)
    assert missing.code == 2 and "required, not given: Region" in missing.err
    given = cli(
        "question", "answer", question_id,
        "--field", "branch=main", "--field", "region=Europe", "--field", "canary=no",
        "--json", "--root", root,
    )  # fmt: skip
    assert given.code == 0, given.err
    wait_until(lambda: "result" in done, 30)
    assert output(done)["content"] == {"branch": "main", "region": "eu", "canary": False}
    answered = json.loads(given.out)["answer"]
    assert json.loads(answered) == {
        "action": "accept",
        "content": {"branch": "main", "canary": False, "region": "eu"},
    }


def test_without_a_console_claude_code_asks_in_its_own_dialog(hooked: Bridge, cli) -> None:  # type: ignore[no-untyped-def]
    hooked.send("SessionStart")
    result = hooked.send("Elicitation")
    assert (result.exit_code, result.stdout, result.errors) == (0, "", [])
    row = {r["key"]: r for r in cli("agents", "--json", "--root", str(hooked.project)).json()}
    agent = row[KEY]
    assert agent["activity"] == "waiting"
    assert agent["waiting_for"] == "input: deploy: Where should this deploy go?"
    assert not (hooked.paths.claude_questions).exists() or not list(
        hooked.paths.claude_questions.glob("elicit-*")
    )


def test_nobody_answering_in_time_leaves_claude_codes_dialog(project: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  claude:\n    ask_wait_seconds: 1\n"
    )
    from tests.support.claude import bridge

    with bridge(project) as hooked:
        hooked.send("SessionStart")
        hooked.open_console()
        result = hooked.send("Elicitation")
        assert (result.exit_code, result.stdout, result.errors) == (0, "", [])
        listed = cli("question", "list", "--all", "--json", "--root", str(project)).json()
        (question,) = listed  # type: ignore[misc]
        assert question["state"] == "discarded" and "expired" in question["discarded"]


# -- snapshot ----------------------------------------------------------------------------------


def test_snapshot_the_form_at_80x24(
    clock: ManualClock, snap_dir: Path, snap_compare: Callable
) -> None:
    root = SNAP / "elicitation"
    git.init_repo(root)
    build_scene(root, clock)
    elicitation_request(ProjectPaths(root), clock.now())

    async def open_form(pilot: Pilot) -> None:
        pane = pilot.app.query_one(LocalQuestionsPane)
        pane.open_modal(pane.records[f"claude-code/{ELICIT_TASK}.q1"])
        await until(pilot, lambda: form_open(pilot.app))
        pilot.app.screen.query_one("#field-0", Input).value = "main"
        pilot.app.screen.query_one("#field-3", Select).value = "eu"
        pilot.app.screen.query_one("#form-accept").focus()  # no blinking cursor in the shot
        await pilot.pause()

    app = create_app(root, clock=clock, watch=False, tick_seconds=0)
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_form)
