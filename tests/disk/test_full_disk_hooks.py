"""Claude Code's hook on a full disk, through the installed command: every event exits 0
and prints nothing (Claude Code goes on, or asks in its own dialog), no record is left
half-written, and the agent's state is current again with its first event once space
returns."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runeconsole.core.paths import ProjectPaths
from tests.disk.conftest import Scene
from tests.support.claude import PAYLOADS, Bridge, bridge

EVENTS = sorted(path.stem for path in PAYLOADS.glob("*.json"))


@pytest.fixture
def hooked(scene: Scene) -> Iterator[Bridge]:
    with bridge(scene.root) as made:
        assert made.send("SessionStart").exit_code == 0
        # Once with room, so its settings are cached as in a running fleet.
        assert made.send("PermissionRequest-Bash").exit_code == 0
        yield made


def records(paths: ProjectPaths) -> set[str]:
    """The questions and permission requests relayed to the console, by name."""
    where = paths.claude_questions
    return {p.name for p in where.iterdir()} if where.is_dir() else set()


def quiet(made: Bridge, event: str) -> None:
    result = made.send(event)
    assert (result.exit_code, result.stdout, result.errors) == (0, "", []), (event, result)


def test_every_event_on_a_full_disk_exits_0_prints_nothing_and_leaves_no_half_record(
    scene: Scene, hooked: Bridge
) -> None:
    hooked.open_console()  # questions and requests would be relayed to it
    before, identity = records(scene.paths), hooked.identity()
    scene.disk.fill()

    for event in EVENTS:
        quiet(hooked, event)

    assert scene.disk.temp_files() == []
    assert records(scene.paths) == before
    assert hooked.identity() == identity  # unchanged: nothing could be written
    scene.disk.free()
    quiet(hooked, "UserPromptSubmit")
    now = hooked.identity()
    assert now["last_seen"] >= identity["last_seen"] and now["activity"] == "busy", now


@pytest.mark.parametrize("event", ["PermissionRequest-Bash", "PermissionDenied"])
def test_a_request_whose_decision_cannot_be_written_is_taken_back_whole(
    scene: Scene, hooked: Bridge, event: str
) -> None:
    before = records(scene.paths)
    scene.disk.fill(leave_pages=1)  # room for the request, not for its decision

    quiet(hooked, event)

    assert records(scene.paths) == before
    assert scene.disk.temp_files() == []
    scene.disk.free()
    quiet(hooked, event)  # recorded again, whole
    added = records(scene.paths) - before
    assert len(added) == 2 and {name.rsplit(".", 1)[1] for name in added} == {
        "permission",
        "decision",
    }


def test_a_question_call_that_cannot_be_relayed_whole_leaves_no_question(
    scene: Scene, hooked: Bridge
) -> None:
    hooked.open_console()
    before = records(scene.paths)
    scene.disk.fill(leave_pages=1)  # room for the call's first question, not its second

    quiet(hooked, "PreToolUse-AskUserQuestion")

    assert records(scene.paths) == before
    assert scene.disk.temp_files() == []


def test_the_status_line_on_a_full_disk_still_shows_and_records_once_space_returns(
    scene: Scene, hooked: Bridge
) -> None:
    identity = hooked.identity()
    scene.disk.fill()

    shown = hooked.status_line(hooked.status_input("subscription"))

    assert shown.returncode == 0 and shown.stdout.decode().startswith("Sonnet 5.5 · ")
    assert hooked.identity() == identity and scene.disk.temp_files() == []
    scene.disk.free()
    hooked.status_line(hooked.status_input("subscription"))
    assert hooked.identity().get("rate_limits") is not None
