"""AskUserQuestion through the installed hook: relayed to an open console, answered with
``question answer`` (one option, several, a text), expired, and settled with a twin."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.tasks import TaskStore
from runeconsole.core.errors import RuneError
from runeconsole.services.claude.questions import answers, relay, relay_files
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import AskRequest, Questions, RelaySettings
from tests.support.claude import KEY, Bridge
from tests.support.cli import CliResult
from tests.support.hook_runner import HookResult, decision
from tests.support.polling import wait_until

pytestmark = pytest.mark.timeout(120)

HASH = "Which hash should the auth module use?"
CHECKS = "Which checks should run?"


@pytest.fixture
def hooked(hooked: Bridge) -> Bridge:
    """The shared bridge with the agent's session already started."""
    hooked.send("SessionStart")
    return hooked


def relayed(made: Bridge, count: int = 2) -> list[dict]:
    """The call's question files, once the hook has written them."""
    directory = made.paths.claude_questions

    def files() -> list[Path]:
        return sorted(directory.glob("*.question")) if directory.exists() else []

    wait_until(lambda: len(files()) >= count, timeout=30)
    return [json.loads(path.read_text()) | {"id": f"claude-code/{path.stem}"} for path in files()]


def finished(done: dict[str, HookResult]) -> HookResult:
    wait_until(lambda: "result" in done, timeout=60)
    return done["result"]


def answers_given(result: HookResult) -> dict[str, str]:
    assert result.exit_code == 0 and result.errors == [], result
    found = decision([result])
    assert found.permission == "allow"
    assert found.updated_input is not None
    return found.updated_input["answers"]


def test_with_no_console_open_the_hook_prints_nothing_at_once(hooked: Bridge) -> None:
    result = hooked.send("PreToolUse-AskUserQuestion")
    assert (result.exit_code, result.stdout, result.errors) == (0, "", [])
    assert result.seconds < 5
    assert not hooked.paths.claude_questions.exists()
    assert hooked.identity()["activity"] == "waiting"


@pytest.mark.e2e
def test_with_the_relay_disabled_the_hook_prints_nothing_though_a_console_is_open(
    hooked: Bridge,
) -> None:
    talisman = hooked.project / ".claude" / "talisman.yml"
    talisman.write_text("question_relay:\n  enabled: false\n")
    hooked.open_console()
    result = hooked.send("PreToolUse-AskUserQuestion")
    assert (result.exit_code, result.stdout, result.errors) == (0, "", [])
    assert not hooked.paths.claude_questions.exists()
    assert hooked.identity()["activity"] == "waiting"


@pytest.mark.e2e
def test_a_two_question_call_is_answered_with_one_option_and_several(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    hooked.open_console()
    done = hooked.send_later("PreToolUse-AskUserQuestion")
    first, second = relayed(hooked)
    assert (first["question"], first["option_list"], first["multi_select"]) == (
        HASH,
        ["bcrypt", "argon2"],
        False,
    )
    assert second["multi_select"] is True and second["header"] == "Checks"
    assert first["worker_name"] == KEY and first["urgency"] == "blocking"
    assert first["auto_answer_at"] is None  # nothing answers for the operator
    assert first["option_descriptions"] == ["already in deps", "stronger"]
    listed = cli("question", "list", "--json", "--root", str(hooked.project)).json()
    assert {q["id"] for q in listed} == {first["id"], second["id"]}  # type: ignore[union-attr]

    assert (
        cli("question", "answer", first["id"], "--option", "B", "--root", str(hooked.project)).code
        == 0
    )
    assert "result" not in done  # one of two: the hook still waits
    multi = cli(
        "question",
        "answer",
        second["id"],
        "--option",
        "A",
        "--option",
        "C",
        "--root",
        str(hooked.project),
    )
    assert multi.code == 0, multi.err
    result = finished(done)
    assert answers_given(result) == {HASH: "argon2", CHECKS: "lint, e2e"}
    updated = decision([result]).updated_input
    assert (
        updated is not None
        and updated["questions"]
        == hooked.payload("PreToolUse-AskUserQuestion")["tool_input"]["questions"]
    )


@pytest.mark.e2e
def test_a_free_text_answer_is_given_as_it_is(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    hooked.open_console()
    done = hooked.send_later("PreToolUse-AskUserQuestion")
    first, second = relayed(hooked)
    cli("question", "answer", first["id"], "--text", "scrypt, tuned", "--root", str(hooked.project))
    cli("question", "answer", second["id"], "--option", "2", "--root", str(hooked.project))
    assert answers_given(finished(done)) == {HASH: "scrypt, tuned", CHECKS: "unit"}


@pytest.mark.e2e
def test_one_option_for_a_single_choice_question_and_none_unknown(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    hooked.open_console()
    done = hooked.send_later("PreToolUse-AskUserQuestion")
    first, second = relayed(hooked)
    root = str(hooked.project)
    two = cli("question", "answer", first["id"], "--option", "A", "--option", "B", "--root", root)
    assert two.code == 2 and "takes one option" in two.err
    unknown = cli("question", "answer", second["id"], "--option", "D", "--root", root)
    assert unknown.code == 2 and "has no option" in unknown.err
    cli("question", "answer", first["id"], "--option", "A", "--root", root)
    cli("question", "answer", second["id"], "--option", "B", "--root", root)
    assert answers_given(finished(done)) == {HASH: "bcrypt", CHECKS: "unit"}


@pytest.mark.e2e
def test_nobody_answering_in_time_expires_the_call_and_prints_nothing(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    talisman = hooked.project / ".claude" / "talisman.yml"
    talisman.write_text("runeconsole:\n  claude:\n    ask_wait_seconds: 1.5\n")
    hooked.open_console()
    result = hooked.send("PreToolUse-AskUserQuestion")
    assert (result.exit_code, result.stdout, result.errors) == (0, "", [])
    assert 1.0 < result.seconds < 30
    files = sorted(hooked.paths.claude_questions.glob("*"))
    assert [p.suffix for p in files] == [".question", ".question"]  # expired, never answered
    for path in files:
        fields = json.loads(path.read_text())
        assert fields["expired"] is True and fields["discarded"].startswith("expired: nobody")
    assert cli("question", "list", "--json", "--root", str(hooked.project)).json() == []
    late = cli(
        "question",
        "answer",
        f"claude-code/{files[0].stem}",
        "--option",
        "A",
        "--root",
        str(hooked.project),
    )
    assert late.code == 1 and "expired" in late.err


@pytest.mark.e2e
def test_a_console_that_closes_while_the_hook_waits_ends_the_wait(hooked: Bridge) -> None:
    hooked.open_console()
    done = hooked.send_later("PreToolUse-AskUserQuestion")
    relayed(hooked)
    hooked.close_console()
    result = finished(done)
    assert (result.exit_code, result.stdout) == (0, "")
    fields = json.loads(next(hooked.paths.claude_questions.glob("*.q1.question")).read_text())
    assert "console closed" in fields["discarded"]


@pytest.mark.e2e
def test_a_pending_rune_question_with_the_same_text_is_one_question_answered_once(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    rune = Questions(Project(hooked.project), tasks=TaskStore(hooked.project / ".no-tasks"))
    asked, _ = rune.ask(
        AskRequest(
            "task-3",
            HASH,
            ["A: bcrypt", "B: argon2"],
            worker="rune-smith-1",
            signal_dir="rune-work-20260226T120000Z",
        )
    )
    hooked.open_console()
    done = hooked.send_later("PreToolUse-AskUserQuestion")
    first, second = relayed(hooked)
    assert first["twin"] == asked.id and "twin" not in second
    root = str(hooked.project)
    cli("question", "answer", first["id"], "--option", "B", "--root", root)
    cli("question", "answer", second["id"], "--option", "A", "--root", root)
    assert answers_given(finished(done)) == {HASH: "argon2", CHECKS: "lint"}
    settled = rune.get(asked.id).answer
    assert settled is not None
    assert (settled.answer, settled.decided_by, settled.option) == ("B: argon2", "user", "B")


@pytest.mark.e2e
def test_an_answer_to_the_twin_itself_also_answers_the_call(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    rune = Questions(Project(hooked.project), tasks=TaskStore(hooked.project / ".no-tasks"))
    asked, _ = rune.ask(
        AskRequest("task-3", HASH, ["A: bcrypt", "B: argon2"], signal_dir="rune-work-x")
    )
    hooked.open_console()
    done = hooked.send_later("PreToolUse-AskUserQuestion")
    first, second = relayed(hooked)
    root = str(hooked.project)
    cli("question", "answer", asked.id, "--option", "A", "--root", root)
    cli("question", "answer", second["id"], "--option", "C", "--root", root)
    assert answers_given(finished(done)) == {HASH: "bcrypt", CHECKS: "e2e"}
    answer_file = hooked.paths.claude_questions / (Path(first["id"]).name + ".answer")
    closed = json.loads(answer_file.read_text())
    assert closed["via"] == asked.id


# -- the lock between answering and expiring ---------------------------------------------------


@pytest.mark.e2e
def test_an_answer_racing_the_expiry_has_exactly_one_outcome(project: Path) -> None:
    """Many races in-process: either the hook prints the answer (and it is recorded), or
    the call expires (and the answer is refused); never an answer nobody receives."""
    clock = ManualClock()
    service = Questions(Project(project, clock), RelaySettings(), TaskStore(project / ".no-tasks"))
    call = {
        "questions": [
            {
                "question": "Go?",
                "header": "Go",
                "options": [
                    {"label": "yes", "description": ""},
                    {"label": "no", "description": ""},
                ],
            }
        ]
    }
    outcomes = {"answered": 0, "expired": 0}
    for round_ in range(60):
        specs = relay_files.parse_call(call)
        task = f"ask-race{round_}"
        written = relay_files.write_call(
            service.paths,
            specs,
            task_id=task,
            key="claude-x",
            now=clock.now(),
            wait_seconds=60,
            session_id="s",
            tool_use_id=None,
        )
        question = service.read_question(written[0].path)
        printed: list[str] = []
        refused: list[str] = []

        def expire() -> None:
            # the hook's wait at its deadline: one look, then under the lock
            printed.append(relay.wait(service.paths, task, written, call, 0))  # noqa: B023

        def give() -> None:
            try:
                answers.answer(service, question, options=["A"])  # noqa: B023
            except RuneError as exc:
                refused.append(exc.message)  # noqa: B023

        threads = [threading.Thread(target=expire), threading.Thread(target=give)]
        for thread in threads if round_ % 2 else reversed(threads):
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        answered = service.read_question(written[0].path).answer is not None
        if printed[0]:
            assert answered and not refused
            assert json.loads(printed[0])["hookSpecificOutput"]["updatedInput"]["answers"] == {
                "Go?": "yes"
            }
            outcomes["answered"] += 1
        else:
            assert not answered and refused and "expired" in refused[0]
            outcomes["expired"] += 1
    assert sum(outcomes.values()) == 60


def test_a_call_whose_hook_is_gone_is_expired_by_the_console(project: Path) -> None:
    tasks = TaskStore(project / ".no-tasks")
    service = Questions(Project(project), settings=RelaySettings(), tasks=tasks)
    call = {"questions": [{"question": "Go?", "options": [{"label": "yes"}, {"label": "no"}]}]}
    written = relay_files.write_call(
        service.paths,
        relay_files.parse_call(call),
        task_id="ask-orphan",
        key="claude-x",
        now=service.clock.now(),
        wait_seconds=60,
        session_id="s",
        tool_use_id=None,
    )
    fields = json.loads(written[0].path.read_text())
    fields["hook_pid"] = 2**22 + 12345  # no such process
    written[0].path.write_text(json.dumps(fields))
    expired = answers.expire_orphans(service, service.list(), service.clock.now())
    assert expired == ["claude-code/ask-orphan.q1"]
    assert service.list() == []
    assert "hook is gone" in str(service.read_question(written[0].path).discarded)
