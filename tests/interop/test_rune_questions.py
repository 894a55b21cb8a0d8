"""Questions the Rune plugin wrote: its orchestrator's persistence files (it asks the
human itself and applies its own timeout) and its background workers' own files."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import ANOTHER_TOOL, AskRequest, Questions
from runeconsole.tui.console.app import create_app
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from tests.interop.rune_writers import background_question, orchestrator_question, signal_dir

QUESTION = "Should the auth module use bcrypt or argon2 for password hashing?"
OPTIONS = ["A: Use bcrypt (already in deps)", "B: Use argon2 (stronger but new dep)"]


def rune_question(root: Path, *, age: float = 3600) -> Path:
    """The orchestrator's ``task-3.q1.question``, written ``age`` seconds ago."""
    path = orchestrator_question(signal_dir(root), "task-3", 1, QUESTION, OPTIONS)
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_a_question_rune_asked_is_shown_as_asked_by_another_tool_without_a_timeout(
    project: Path, cli
) -> None:
    path = rune_question(project)

    [listed] = cli("question", "list", "--json", "--root", str(project)).json()
    table = cli("question", "list", "--root", str(project)).out

    assert listed["id"] == "rune-work-20260226-014500/task-3.q1"
    assert (listed["asked_by"], listed["seconds_left"], listed["state"]) == (
        ANOTHER_TOOL,
        None,
        "pending",
    )
    assert listed["options"] == OPTIONS
    assert f"asked by {ANOTHER_TOOL}" in table
    assert not path.with_suffix(".answer").exists()


@pytest.mark.e2e
async def test_the_console_never_answers_a_question_another_tool_asked(project: Path) -> None:
    path = rune_question(project, age=0)
    clock = ManualClock()
    clock.advance(86400)  # a day after it was asked: long past any timeout
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        questions = app.query_one(LocalQuestionsPane)
        for _ in range(3):
            questions.tick()
            await pilot.pause()
        await app.workers.wait_for_complete()
        [shown] = questions.records.values()
        assert shown.deadline is None and not shown.asked_here
        table = questions.table
        row = table.get_row(shown.id)
        assert "other" in str(row[4]) and ANOTHER_TOOL in str(row[5])
        assert not any("re-surfaced" in n.title for n in app._notifications)
    assert not path.with_suffix(".answer").exists()


def test_the_operator_may_still_answer_it_in_the_shape_rune_reads(project: Path, cli) -> None:
    path = rune_question(project)

    result = cli(
        "question", "answer", "rune-work-20260226-014500/task-3.q1", "--option", "B",
        "--root", str(project),
    )  # fmt: skip

    assert result.code == 0, result.err
    answer = json.loads(path.with_suffix(".answer").read_text())
    assert {k: answer[k] for k in ("task_id", "answer", "decided_by", "seq")} == {
        "task_id": "task-3",
        "answer": OPTIONS[1],
        "decided_by": "user",
        "seq": 1,
    }


def test_wait_on_another_tools_question_waits_for_a_person_not_a_timeout(project: Path) -> None:
    rune_question(project)
    relay = Questions(Project(project))
    [question] = relay.list()
    assert question.seconds_left(relay.clock.now()) is None
    assert relay.auto_answer_due([question]) == []  # nothing is due: nothing is decided
    assert question.answer_path.exists() is False


def test_questions_runeconsole_asks_keep_their_timeout(project: Path) -> None:
    relay = Questions(Project(project))
    asked, _ = relay.ask(AskRequest(task_id="task-4", question="Rename it?", options=["A", "B"]))
    assert asked.asked_here and asked.fields["asked_by"] == "runeconsole"
    assert asked.deadline is not None


# -- where Rune writes questions ---------------------------------------------------------------


def test_background_workers_questions_are_listed_and_answerable(project: Path, cli) -> None:
    path = background_question(project, "20260226-014500", "task-5", "Which queue?", OPTIONS)
    root = ("--root", str(project))

    [listed] = cli("question", "list", "--json", *root).json()
    answered = cli("question", "answer", "work/20260226-014500/task-5", "--text", "redis", *root)

    assert listed["id"] == "work/20260226-014500/task-5"
    assert (listed["worker_name"], listed["asked_by"]) == ("rune-smith-2", ANOTHER_TOOL)
    assert answered.code == 0, answered.err
    answer = json.loads(path.with_name("task-5.answer").read_text())
    assert (answer["answer"], answer["decided_by"]) == ("redis", "user")
    assert cli("question", "list", "--json", *root).json() == []


@pytest.mark.e2e
async def test_the_console_lists_background_questions_as_they_appear(project: Path) -> None:
    app = create_app(project, watch=False, tick_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("3")
        questions = app.query_one(LocalQuestionsPane)
        path = background_question(project, "20260226-020000", "task-6", "Which port?", OPTIONS)
        questions.apply_changes({path.parent.parent})  # a new background run appeared
        await pilot.pause()
        assert "work/20260226-020000/task-6" in questions.records
        path.with_name("task-6.answer").write_text('{"answer": "8080", "decided_by": "user"}')
        questions.apply_changes({path.with_name("task-6.answer")})
        await pilot.pause()
        assert questions.records == {}


def test_any_rune_work_directory_with_a_valid_id_is_read(project: Path, cli) -> None:
    for stamp in ("20260226-014500", "custom_run-7"):
        orchestrator_question(signal_dir(project, stamp), "task-1", 1, QUESTION, OPTIONS)
    ids = {q["id"] for q in cli("question", "list", "--json", "--root", str(project)).json()}
    assert ids == {"rune-work-20260226-014500/task-1.q1", "rune-work-custom_run-7/task-1.q1"}


def test_signal_directories_runeconsole_creates_are_named_as_rune_names_them(
    project: Path,
) -> None:
    relay = Questions(Project(project, ManualClock()))
    asked, _ = relay.ask(AskRequest(task_id="task-2", question="Which?", options=["A", "B"]))
    directory = asked.path.parent
    assert directory.name == "rune-work-20260226-120000"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
