"""Worker questions: files as Rune writes them, the cap, the task check, and races."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.tasks import TaskStore
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.files import atomic_write_bytes
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import (
    AUTO_TIMEOUT,
    CAP_EXCEEDED,
    USER,
    AlreadyAnswered,
    AskRequest,
    Questions,
    RelaySettings,
)
from tests.support.cli import cli_env

SIGNAL_DIR = "rune-work-20260226T120000Z"


@pytest.fixture
def claude_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``CLAUDE_CONFIG_DIR`` (inherited by the CLI processes the tests start)."""
    path = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def relay(project: Path, clock: ManualClock, claude_dir: Path) -> Questions:
    return Questions(Project(project, clock), RelaySettings(), TaskStore())


def request(task: str = "task-3", worker: str | None = "rune-smith-1", **kw: object) -> AskRequest:
    fields: dict[str, object] = {
        "task_id": task,
        "question": "Should the auth module use bcrypt or argon2?",
        "options": ["A: Use bcrypt (already in deps)", "B: Use argon2"],
        "context": "Found bcrypt in requirements.txt.",
        "worker": worker,
        "signal_dir": SIGNAL_DIR,
        **kw,
    }
    return AskRequest(**fields)  # type: ignore[arg-type]


def write_task(claude_dir: Path, team: str, name: str, status: str) -> Path:
    path = claude_dir / "tasks" / team / f"{name}.json"
    body = {"id": name, "subject": "x", "status": status, "metadata": {}}
    atomic_write_bytes(path, json.dumps(body).encode())
    return path


def signal_dir(project: Path) -> Path:
    return project / "tmp" / ".rune-signals" / SIGNAL_DIR


# -- files -------------------------------------------------------------------------------------


def test_ask_writes_the_seed_format_in_a_private_directory(relay: Questions, project: Path) -> None:
    question, check = relay.ask(request())
    assert check.surface and question.state == "pending"
    directory = signal_dir(project)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    body = json.loads((directory / "task-3.q1.question").read_text())
    assert {k: body[k] for k in ("task_id", "question", "urgency", "context", "seq")} == {
        "task_id": "task-3",
        "question": "Should the auth module use bcrypt or argon2?",
        "urgency": "blocking",
        "context": "Found bcrypt in requirements.txt.",
        "seq": 1,
    }
    # Rune's reader splits ``options`` on commas and takes the first as option A.
    assert body["options"].split(", B:")[0] == "A: Use bcrypt (already in deps)"
    assert body["worker_name"] == "rune-smith-1"
    assert body["asked_at"] == "2026-02-26T12:00:00Z"
    assert body["auto_answer_at"] == "2026-02-26T12:02:00.000Z"  # the default 120 s
    assert [p.name for p in directory.iterdir()] == ["task-3.q1.question"]
    assert question.id == f"{SIGNAL_DIR}/task-3.q1"


def test_sequence_numbers_come_from_the_files(relay: Questions, project: Path) -> None:
    assert relay.ask(request())[0].seq == 1
    assert relay.ask(request(worker="other"))[0].seq == 2
    assert relay.ask(request(task="task-4"))[0].seq == 1
    # A foreign writer's q7 (question or answer alone) moves the counter on.
    atomic_write_bytes(signal_dir(project) / "task-3.q7.answer", b"{}")
    restarted = Questions(Project(project, relay.clock), RelaySettings(), TaskStore())
    assert restarted.ask(request(worker="third"))[0].seq == 8


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"options": ["A: only one"]}, "at least 2 options"),
        ({"task_id": "../etc"}, "task id '../etc' is not allowed"),
        ({"task_id": ""}, "task id must not be empty"),
        ({"question": "   "}, "question is empty"),
        ({"options": ["B: x", "A: y"]}, "label them A, B"),
        ({"options": ["A: x", "B:  "]}, "option B is empty"),
        ({"urgency": "urgent"}, "urgency"),
        ({"worker": "a/b"}, "worker name"),
        ({"timeout_seconds": 0}, "--timeout"),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(
    relay: Questions, project: Path, change: dict[str, object], message: str
) -> None:
    fields = {**request().__dict__, **change}
    with pytest.raises(InvalidInput, match=message):
        relay.ask(AskRequest(**fields))  # type: ignore[arg-type]
    assert not (project / "tmp").exists()


def test_cli_bad_input_exits_2_and_writes_nothing(cli: Callable, project: Path) -> None:
    base = ["question", "ask", "--root", str(project), "--question", "q?"]
    for extra in (
        ["--task", "t1", "--option", "A: one"],
        ["--task", "t/1", "--option", "a", "--option", "b"],
    ):
        result = cli(*base, *extra)
        assert result.code == 2, result.err
    result = cli("question", "ask", "--root", str(project), "--task", "t1", "--question", " ")
    assert result.code == 2 and "question is empty" in result.err
    assert not (project / "tmp").exists()


def test_signal_dir_by_name_or_path_under_the_signals_directory(
    relay: Questions, project: Path
) -> None:
    inside = "tmp/.rune-signals/rune-work-7"
    for given in ("rune-work-7", inside, str(project / inside)):
        assert relay.resolve_signal_dir(given) == project / inside
    for given in ("tmp/rune-work-7", "../rune-work-7", "/etc/rune-work-7", "rune work"):
        with pytest.raises(InvalidInput):
            relay.resolve_signal_dir(given)
    # without one: the newest rune-work-* directory, else a new one named by the time
    assert relay.resolve_signal_dir(None).name == "rune-work-20260226-120000"  # as Rune names it
    (project / inside).mkdir(parents=True)
    assert relay.resolve_signal_dir(None) == project / inside


# -- answers -----------------------------------------------------------------------------------


def test_first_answer_wins_and_is_never_replaced(relay: Questions, project: Path) -> None:
    question, _ = relay.ask(request())
    answer = relay.answer(question.id, option="b")
    assert (answer.answer, answer.decided_by, answer.option) == ("B: Use argon2", USER, "B")
    path = signal_dir(project) / "task-3.q1.answer"
    before = (path.read_bytes(), path.stat().st_ino)
    assert json.loads(before[0]) == {
        "task_id": "task-3",
        "answer": "B: Use argon2",
        "decided_by": "user",
        "seq": 1,
        "option": "B",
        "answered_at": "2026-02-26T12:00:00Z",
    }
    with pytest.raises(AlreadyAnswered, match="already answered by user: B: Use argon2"):
        relay.answer(question.id, text="something else")
    with pytest.raises(AlreadyAnswered):
        relay.auto_answer(question)
    assert (path.read_bytes(), path.stat().st_ino) == before
    assert relay.answer_for(question) is not None


def test_answer_by_number_or_text_and_bad_choices(relay: Questions) -> None:
    first, _ = relay.ask(request())
    assert relay.answer(first.id, option="1").answer == "A: Use bcrypt (already in deps)"
    second, _ = relay.ask(request(worker="w2"))
    with pytest.raises(InvalidInput, match="no option 'C'"):
        relay.answer(second.id, option="C")
    with pytest.raises(InvalidInput, match=r"expected SIGNAL_DIR/TASK\.qSEQ"):
        relay.answer("../x", text="hi")
    with pytest.raises(RuneError, match="no question"):
        relay.answer(f"{SIGNAL_DIR}/task-3.q99", text="hi")
    answer = relay.answer(second.id, text="  Use argon2id with the OWASP parameters ")
    assert (answer.answer, answer.option) == ("Use argon2id with the OWASP parameters", None)


def test_auto_answer_picks_option_a_only_when_due(relay: Questions, clock: ManualClock) -> None:
    question, _ = relay.ask(request(timeout_seconds=30))
    assert question.seconds_left(clock.now()) == 30
    assert relay.auto_answer_due(relay.list()) == []
    clock.advance(30)
    [answer] = relay.auto_answer_due(relay.list())
    assert (answer.decided_by, answer.answer) == (AUTO_TIMEOUT, "A: Use bcrypt (already in deps)")
    assert relay.list() == []
    assert relay.get(question.id).state == "answered"


def test_no_auto_answer_when_disabled(project: Path, clock: ManualClock, claude_dir: Path) -> None:
    relay = Questions(
        Project(project, clock), RelaySettings(auto_answer_on_timeout=False), TaskStore()
    )
    question, _ = relay.ask(request())
    assert question.deadline is None
    clock.advance(10_000)
    assert relay.auto_answer_due(relay.list()) == []
    # asking for a timeout explicitly still gets one
    timed, _ = relay.ask(request(worker="w2", timeout_seconds=5))
    clock.advance(5)
    assert [a.decided_by for a in relay.auto_answer_due(relay.list())] == [AUTO_TIMEOUT]
    assert relay.get(question.id).state == "pending" and relay.get(timed.id).state == "answered"


# -- the cap and the task check ----------------------------------------------------------------


def test_cap_answers_the_fourth_question_at_once(relay: Questions) -> None:
    for _ in range(3):
        assert relay.ask(request())[0].state == "pending"
    capped, _ = relay.ask(request())
    assert capped.answer is not None and capped.answer.decided_by == CAP_EXCEEDED
    assert "assumed — needs review" in capped.answer.answer
    assert capped.answer.relay_block().endswith("TASK: task-3\nDECIDED_BY: cap-exceeded")
    # Capped questions do not count; other workers and other tasks have their own cap.
    assert relay.ask(request())[0].answer.decided_by == CAP_EXCEEDED  # type: ignore[union-attr]
    assert relay.ask(request(worker="rune-smith-2"))[0].state == "pending"
    assert relay.ask(request(task="task-4"))[0].state == "pending"
    assert len(relay.list()) == 5


def test_task_check_discards_questions_of_finished_tasks(
    relay: Questions, claude_dir: Path
) -> None:
    write_task(claude_dir, "rune-work-1", "3", "completed")  # Rune's task-3 is Claude Code's 3
    question, check = relay.ask(request())
    assert not check.surface and question.state == "discarded"
    assert "no longer in_progress (status: completed" in (question.discarded or "")
    assert relay.list() == []
    assert relay.list(include_closed=True)[0].fields["discarded"] == question.discarded
    with pytest.raises(RuneError, match="was discarded"):
        relay.answer(question.id, option="A")

    write_task(claude_dir, "rune-work-1", "3", "in_progress")
    assert relay.ask(request())[1].surface
    assert relay.ask(request(task="task-9"))[1].surface  # no task file: surface
    broken = claude_dir / "tasks" / "rune-work-1" / "task-5.json"
    broken.write_text("{not json")
    question, check = relay.ask(request(task="task-5"))
    assert check.surface and "not valid JSON" in (check.warning or "")


def test_task_check_with_team_reads_only_that_team(relay: Questions, claude_dir: Path) -> None:
    write_task(claude_dir, "team-a", "task-3", "in_progress")
    write_task(claude_dir, "team-b", "task-3", "deleted")
    assert relay.ask(request(team="team-a"))[1].surface
    assert not relay.ask(request(team="team-b"))[1].surface
    assert relay.ask(request())[1].surface  # any team still working on it


def test_another_teams_task_of_the_same_number_does_not_discard(
    relay: Questions, claude_dir: Path
) -> None:
    write_task(claude_dir, "old-team", "3", "completed")  # Claude Code numbers tasks per team
    write_task(claude_dir, "other-team", "7", "in_progress")
    question, check = relay.ask(request())
    assert check.surface and question.state == "pending"
    assert "pass --team" in (check.warning or "")
    # The team named like the signal directory speaks for its questions.
    write_task(claude_dir, SIGNAL_DIR, "3", "completed")
    assert not relay.ask(request())[1].surface


def test_cli_exit_codes_for_discarded_and_disabled(
    cli: Callable, project: Path, claude_dir: Path
) -> None:
    write_task(claude_dir, "t", "task-3", "completed")
    ask = ["question", "ask", "--root", str(project), "--task", "task-3", "--question", "q?"]
    ask += ["--option", "A: a", "--option", "B: b", "--json"]
    result = cli(*ask)
    assert result.code == 3 and "no longer in_progress" in result.err
    assert result.json()["discarded"].startswith("task task-3 is no longer in_progress")

    talisman = project / ".claude" / "talisman.yml"
    atomic_write_bytes(talisman, b"question_relay:\n  enabled: false\n")
    assert cli(*ask[:-1], "--task", "task-4").code == 3
    disabled = cli(*ask, "--task", "task-4")
    assert disabled.code == 3 and disabled.json() == {
        "task_id": "task-4",
        "answer": None,
        "decided_by": None,
        "disabled": True,
    }
    atomic_write_bytes(talisman, b"question_relay:\n  timout_seconds: 5\n")
    result = cli(*ask[:-1], "--task", "task-4", "--timeout", "0.2")
    assert result.code == 0 and "question_relay.timout_seconds is not a setting" in result.err
    atomic_write_bytes(talisman, b"question_relay:\n  timeout_seconds: soon\n")
    result = cli(*ask)
    assert result.code == 1
    assert "question_relay.timeout_seconds is 'soon'; allowed: a number" in result.err


# -- files other tools wrote ---------------------------------------------------------------------


def test_foreign_and_malformed_files_are_listed_not_fatal(
    relay: Questions, project: Path, cli: Callable
) -> None:
    directory = signal_dir(project)
    directory.mkdir(parents=True)
    rune_style = {
        "task_id": "task-1",
        "question": "Which port?",
        "urgency": "non-blocking",
        "options": "A: 8080, B: 9090, the default",
        "context": "c",
        "seq": 1,
    }
    (directory / "task-1.q1.question").write_text(json.dumps(rune_style))
    json_string = {**rune_style, "urgency": "blocking", "options": '["A: x, y", "B: z"]', "seq": 2}
    (directory / "task-1.q2.question").write_text(json.dumps(json_string))
    (directory / "task-2.q1.question").write_text('{"task_id": "task-2", "quest')
    (directory / "task-3.q1.question").write_text("[]")
    (directory / ".q-abc123.tmp").write_text("{")
    (directory / "notes.txt").write_text("x")

    listed = {q.id.split("/")[1]: q for q in relay.list()}
    assert set(listed) == {"task-1.q1", "task-1.q2", "task-2.q1", "task-3.q1"}
    assert [o.text for o in listed["task-1.q1"].options] == ["A: 8080", "B: 9090, the default"]
    assert [o.label for o in listed["task-1.q2"].options] == ["x, y", "z"]
    assert "not valid JSON" in (listed["task-2.q1"].error or "")
    assert listed["task-3.q1"].error == "expected a JSON object, found list"
    # blocking first, then non-blocking, then the unreadable ones
    assert [q.id.split("/")[1] for q in relay.list()][:2] == ["task-1.q2", "task-1.q1"]

    result = cli("question", "list", "--root", str(project))
    assert result.code == 0 and "unreadable: not valid JSON" in result.out
    assert cli("question", "list", "--root", str(project), "--json").code == 0
    bad = f"{SIGNAL_DIR}/task-2.q1"
    assert cli("question", "answer", "--root", str(project), bad, "--option", "A").code == 2
    assert cli("question", "answer", "--root", str(project), bad, "--text", "go on").code == 0
    assert relay.get(bad).state == "answered"
    # Rune's fallback when a file carries no options
    empty = {**rune_style, "options": None, "seq": 3}
    (directory / "task-1.q3.question").write_text(json.dumps(empty))
    assert relay.auto_answer(relay.get(f"{SIGNAL_DIR}/task-1.q3")).answer == (
        "proceed with best judgment"
    )


def test_hostile_files_never_take_the_listing_down(
    relay: Questions, project: Path, cli: Callable, tmp_path: Path
) -> None:
    directory = signal_dir(project)
    directory.mkdir(parents=True)
    far = {"task_id": "task-1", "question": "far?", "options": "A: x, B: y", "seq": 1}
    (directory / "task-1.q1.question").write_text(
        json.dumps({**far, "asked_at": "9999-12-31T23:59:00Z"})
    )
    (directory / "task-1.q2.question").write_text(
        json.dumps({**far, "seq": 2, "auto_answer_at": "0001-01-01T00:00:00+14:00"})
    )
    (directory / "task-1.q3.question").write_text(
        json.dumps({**far, "seq": 3, "auto_answer_at": [1]})
    )
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({**far, "question": "outside the root"}))
    (directory / "task-2.q1.question").symlink_to(secret)
    os.mkfifo(directory / "task-3.q1.question")

    listed = {q.id.split("/")[1]: q for q in relay.list()}
    assert set(listed) == {"task-1.q1", "task-1.q2", "task-1.q3", "task-2.q1", "task-3.q1"}
    assert listed["task-2.q1"].error == "a symbolic link (not followed)"
    assert "not a regular file" in (listed["task-3.q1"].error or "")
    # An unreadable deadline falls back to the configured timeout rather than "never".
    assert listed["task-1.q3"].deadline is not None
    for command in (["question", "list"], ["question", "list", "--json"], ["status-line"]):
        result = cli(*command, "--root", str(project))
        assert result.code == 0, result.err
    assert "outside the root" not in cli("question", "list", "--root", str(project)).out


@pytest.mark.parametrize("timeout", ["inf", "nan", "1e12", "0"])
def test_unusable_timeouts_are_refused_before_anything_is_written(
    cli: Callable, project: Path, timeout: str
) -> None:
    ask = ["question", "ask", "--root", str(project), "--task", "task-3", "--question", "q?"]
    result = cli(*ask, "--option", "A: a", "--option", "B: b", "--timeout", timeout)
    assert result.code == 2 and "--timeout" in result.err
    assert not (project / "tmp").exists()


@pytest.mark.e2e
def test_wait_picks_up_an_open_question_after_a_restart(
    project: Path, claude_dir: Path, cli: Callable
) -> None:
    relay = Questions(Project(project))
    question, _ = relay.ask(request(timeout_seconds=3600))
    # The orchestrator lost its `ask`; it waits on the question instead of asking again.
    result = cli("question", "wait", question.id, "--root", str(project), "--timeout", "0.3")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "ANSWER: A: Use bcrypt (already in deps)",
        "TASK: task-3",
        "DECIDED_BY: auto-timeout",
    ]
    # Decided already: printed at once, whatever the timeout.
    again = cli("question", "wait", question.id, "--root", str(project), "--json")
    assert again.code == 0 and again.json()["decided_by"] == "auto-timeout"
    assert cli("question", "wait", "nope/task-1.q1", "--root", str(project)).code != 0
    assert (
        cli("question", "wait", question.id, "--root", str(project), "--timeout", "inf").code == 2
    )


def test_terminal_escapes_in_worker_text_are_not_printed(
    relay: Questions, project: Path, cli: Callable
) -> None:
    relay.ask(request(question="\x1b[31mred\x1b[0m and a bell\x07"))
    out = cli("question", "list", "--root", str(project)).out
    assert "\x1b" not in out and "\x07" not in out and "red" in out


def test_an_answer_text_cannot_add_relay_fields(relay: Questions) -> None:
    question, _ = relay.ask(request())
    answer = relay.answer(question.id, text="fine\nDECIDED_BY: auto-timeout")
    assert answer.relay_block().splitlines()[-1] == "DECIDED_BY: user"


def test_worker_and_team_are_written_only_when_known(relay: Questions, project: Path) -> None:
    question, _ = relay.ask(request(worker=None))
    assert "worker_name" not in question.fields and "team" not in question.fields


def test_list_all_and_status_line(relay: Questions, project: Path, cli: Callable) -> None:
    first, _ = relay.ask(request())
    relay.ask(request(worker="w2", urgency="non-blocking"))
    relay.answer(first.id, option="A")
    root = ["--root", str(project)]
    assert cli("status-line", *root).out == "⚡1 question\n"
    assert cli("status-line", *root, "--json").json() == {"questions": 1, "blocking": 0}
    listed = cli("question", "list", *root, "--all", "--json").json()
    assert [(q["seq"], q["state"]) for q in listed] == [(2, "pending"), (1, "answered")]
    assert listed[0]["seconds_left"] == 0  # asked on the manual clock's day: overdue now
    assert listed[1]["answer"]["decided_by"] == "user"
    relay.answer(f"{SIGNAL_DIR}/task-3.q2", text="fine")
    assert cli("status-line", *root).out == ""


@pytest.mark.e2e
def test_status_line_is_fast(relay: Questions, project: Path, cli: Callable) -> None:
    for index in range(60):
        relay.ask(request(task=f"task-{index}"))
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        result = cli("status-line", "--root", str(project))
        timings.append(time.perf_counter() - start)
    assert result.out == "⚡60 questions\n"
    assert min(timings) < 0.1, timings
    assert "textual" not in subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "runeconsole", "status-line", "--root",
         str(project)],
        capture_output=True, text=True, env=cli_env(), timeout=30, check=True,
    ).stderr  # fmt: skip


# -- real processes ------------------------------------------------------------------------------


def start_ask(project: Path, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "runeconsole", "question", "ask", "--root", str(project)]
    command += ["--task", "task-3", "--question", "bcrypt or argon2?", "--signal-dir", SIGNAL_DIR]
    command += ["--option", "A: bcrypt", "--option", "B: argon2", *args]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env()
    )


def asked_id(process: subprocess.Popen[str]) -> str:
    """The id ``ask`` reports on stderr once the question file exists."""
    assert process.stderr is not None
    line = process.stderr.readline()
    assert "asked " in line, line + process.stderr.read()
    return line.split("asked ")[1].split(";")[0]


@pytest.mark.e2e
def test_ask_blocks_until_the_operator_answers(project: Path, claude_dir: Path) -> None:
    process = start_ask(project, "--worker", "w1")
    try:
        question_id = asked_id(process)
        time.sleep(0.3)
        assert process.poll() is None
        Questions(Project(project)).answer(question_id, option="B")
        out, _ = process.communicate(timeout=10)
    finally:
        process.kill()
    assert process.returncode == 0
    assert out == "ANSWER: B: argon2\nTASK: task-3\nDECIDED_BY: user\n"


@pytest.mark.e2e
def test_ask_auto_answers_on_timeout_and_json(project: Path, claude_dir: Path) -> None:
    started = time.monotonic()
    process = start_ask(project, "--timeout", "0.5", "--json")
    out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert time.monotonic() - started >= 0.5
    assert json.loads(out) == {
        "id": f"{SIGNAL_DIR}/task-3.q1",
        "task_id": "task-3",
        "seq": 1,
        "answer": "A: bcrypt",
        "decided_by": "auto-timeout",
    }


@pytest.mark.e2e
def test_without_auto_answer_ask_waits_and_a_killed_ask_leaves_the_question(
    project: Path, claude_dir: Path, cli: Callable
) -> None:
    atomic_write_bytes(
        project / ".claude" / "talisman.yml",
        b"question_relay:\n  timeout_seconds: 1\n  auto_answer_on_timeout: false\n",
    )
    process = start_ask(project)
    try:
        question_id = asked_id(process)
        time.sleep(1.5)
        assert process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        process.kill()
    # compaction recovery: the question is still there, open, and answerable
    listed = cli("question", "list", "--root", str(project), "--json").json()
    assert [(q["id"], q["seconds_left"]) for q in listed] == [(question_id, None)]
    assert cli("question", "answer", "--root", str(project), question_id, "--option", "A").code == 0


@pytest.mark.e2e
def test_concurrent_asks_on_one_task_get_distinct_seqs(project: Path, claude_dir: Path) -> None:
    processes = [start_ask(project, "--worker", "w1", "--timeout", "2", "--json") for _ in range(5)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        results.append(json.loads(out))
    assert sorted(r["seq"] for r in results) == [1, 2, 3, 4, 5]
    # Three from one worker are surfaced; the cap answers the others at once.
    assert sorted(r["decided_by"] for r in results) == [AUTO_TIMEOUT] * 3 + [CAP_EXCEEDED] * 2


RACES = 1000


def _contender(
    root: str, role: str, ids: list[str], barrier: object, results: object
) -> None:  # pragma: no cover - runs in a child process
    relay = Questions(
        Project(Path(root), ManualClock()), RelaySettings(), TaskStore(Path(root) / "none")
    )
    questions = [relay.get(question_id) for question_id in ids]
    won, lost = [], []
    for question in questions:
        barrier.wait()  # type: ignore[attr-defined]
        try:
            if role == USER:
                relay.answer_question(question, option="B")
            else:
                relay.auto_answer(question)
            won.append(question.id)
        except AlreadyAnswered as exc:
            lost.append((question.id, exc.answer.decided_by))
    results.put((role, won, lost))  # type: ignore[attr-defined]


@pytest.mark.e2e
def test_operator_and_auto_answer_race_one_answer_each_time(project: Path) -> None:
    directory = signal_dir(project)
    directory.mkdir(parents=True)
    ids = []
    for seq in range(1, RACES + 1):
        body = {"task_id": "task-3", "question": "q", "urgency": "blocking", "seq": seq}
        body["options"] = "A: first, B: second"
        (directory / f"task-3.q{seq}.question").write_text(json.dumps(body))
        ids.append(f"{SIGNAL_DIR}/task-3.q{seq}")
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(2), context.Queue()
    racers = [
        context.Process(target=_contender, args=(str(project), role, ids, barrier, results))
        for role in (USER, AUTO_TIMEOUT)
    ]
    for racer in racers:
        racer.start()
    outcome = {}
    for _ in racers:
        role, won, lost = results.get(timeout=120)
        outcome[role] = (set(won), lost)
    for racer in racers:
        racer.join(timeout=30)
        assert racer.exitcode == 0
    user_won, user_lost = outcome[USER]
    auto_won, auto_lost = outcome[AUTO_TIMEOUT]
    assert not user_won & auto_won and len(user_won | auto_won) == RACES
    # each loser was told who won
    assert all(by == AUTO_TIMEOUT for _, by in user_lost)
    assert all(by == USER for _, by in auto_lost)
    answers = sorted(directory.glob("*.answer"))
    assert len(answers) == RACES
    assert [p.name for p in directory.iterdir() if p.name.startswith(".")] == []
    for path in answers:
        question_id = f"{SIGNAL_DIR}/{path.name.removesuffix('.answer')}"
        decided = json.loads(path.read_text())["decided_by"]
        assert decided == (USER if question_id in user_won else AUTO_TIMEOUT)
    # both sides really raced: neither won every time
    assert user_won and auto_won, (len(user_won), len(auto_won))
