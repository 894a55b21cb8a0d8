"""Tasks on disk: a file that cannot be read is a task shown as unreadable with the reason,
never a crash of the listing nor of the recovery that runs before it; ids are checked before
a path is built; a second task of one name is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.dispatch.task_store import TaskStore
from runeconsole.services.dispatch.undoing import Recovery
from runeconsole.services.project import Project
from runeconsole.services.supervision.service import Supervisor
from tests.support.merge_queue import rev


@pytest.fixture
def store(project: Path) -> TaskStore:
    return TaskStore(Project(project))


def written(store: TaskStore, name: str, body: bytes) -> Path:
    store.directory.mkdir(parents=True, exist_ok=True)
    path = store.directory / name
    path.write_bytes(body)
    return path


def test_an_unreadable_task_is_listed_with_the_reason_beside_the_good_ones(
    store: TaskStore,
) -> None:
    store.create("good", {"text": "fine", "state": "working", "attempts": []})
    written(store, "torn.json", b'{"text": "cut sh')
    written(store, "list.json", b"[1, 2]")
    written(store, "flat.json", json.dumps({"text": "no attempts", "attempts": 3}).encode())
    written(store, ".good.json.123.tmp", b"{")  # a writer's temp file
    written(store, "bad name!.json", b"{}")  # no task id: not a task

    tasks = {task.task_id: task for task in store.list()}

    assert set(tasks) == {"good", "torn", "list", "flat"}
    assert tasks["good"].state == "working" and tasks["good"].error is None
    for name in ("torn", "list", "flat"):
        assert tasks[name].state == "unreadable" and tasks[name].error
    assert tasks["flat"].error == "no attempts list"
    assert tasks["torn"].to_json() == {
        "task_id": "torn",
        "state": "unreadable",
        "error": tasks["torn"].error,
        "path": str(store.directory / "torn.json"),
    }


def test_an_unreadable_task_is_never_changed_and_recovery_passes_it_by(
    project: Path, store: TaskStore
) -> None:
    path = written(store, "torn.json", b"\x00\xff not json")

    with pytest.raises(RuneError, match="task torn cannot be changed"):
        store.update("torn", lambda fields: fields.update({"state": "dropped"}))

    assert Recovery(Supervisor(Project(project)), store).recover() == []
    assert path.read_bytes() == b"\x00\xff not json"


def test_a_task_id_is_checked_before_a_path_is_built_from_it(store: TaskStore) -> None:
    for bad in ("../escape", "a/b", "", ".hidden"):
        with pytest.raises(InvalidInput):
            store.path_for(bad)
    with pytest.raises(InvalidInput):
        store.output_path("ok", 1, "../setup")


def test_a_second_task_of_one_name_is_refused_and_the_first_kept(store: TaskStore) -> None:
    store.create("twice", {"text": "first", "attempts": []})
    with pytest.raises(RuneError, match="task twice already exists"):
        store.create("twice", {"text": "second", "attempts": []})
    assert store.read("twice").text == "first"


def test_a_task_that_does_not_exist_says_how_to_list_them(store: TaskStore) -> None:
    with pytest.raises(RuneError, match="runeconsole task list"):
        store.read("nowhere")


@pytest.mark.parametrize(
    "attempt",
    [
        {"n": 1, "state": "starting"},
        {"n": 1, "name": "x", "agent": "../../x", "state": "starting", "worktree": "/x"},
        {"n": 1, "name": "x", "agent": "worker-x", "state": "starting", "worktree": 7},
        {"n": 1, "name": "x", "agent": "worker-x", "state": "starting", "branch": "main"},
    ],
)
def test_recovery_of_a_hand_edited_task_cut_short_touches_nothing_and_does_not_crash(
    project: Path, store: TaskStore, attempt: dict
) -> None:
    main = rev(project, "main")
    attempt = {"worktree": str(project / ".claude" / "worktrees" / "x"), **attempt}
    body = {"text": "t", "role": "worker", "base_commit": main, "state": "creating"}
    written(store, "edited.json", json.dumps({**body, "attempts": [attempt]}).encode())

    said = Recovery(Supervisor(Project(project)), store).recover()

    assert said == [
        "attempt 1 of edited: interrupted while being made; not as new wrote it, left alone"
    ]
    assert store.read("edited").state == "dropped"
    assert rev(project, "main") == main
