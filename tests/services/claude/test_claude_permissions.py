"""Permission requests through the installed hook: decided from the CLI (as the console
does), by the operator's rules, by nobody (no console, the wait ran out), and raced."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge import waiting
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.permissions.service import AlreadyDecided, Gone, Permissions
from runeconsole.services.project import Project
from tests.support.claude import KEY, Bridge, bridge
from tests.support.cli import CliResult
from tests.support.hook_runner import HookResult
from tests.support.polling import wait_until

pytestmark = pytest.mark.timeout(120)

COMMAND = "touch made-by-bash"


@pytest.fixture
def hooked(project: Path) -> Iterator[Bridge]:
    with bridge(project) as made:
        made.send("SessionStart")
        yield made


def chosen(result: HookResult) -> dict | None:
    """The decision the hook printed (``None``: it printed nothing)."""
    assert result.exit_code == 0 and result.errors == [], result
    if not result.stdout.strip():
        return None
    specific = result.output["hookSpecificOutput"]  # type: ignore[index]
    assert specific["hookEventName"] == "PermissionRequest"
    return specific["decision"]


def finished(done: dict[str, HookResult]) -> HookResult:
    wait_until(lambda: "result" in done, timeout=60)
    return done["result"]


def waiting_request(made: Bridge) -> str:
    service = Permissions(Project(made.project))
    wait_until(lambda: len(service.pending()) == 1, timeout=30)
    return service.pending()[0].id


def one_bash_request(hooked: Bridge) -> tuple[str, dict[str, HookResult], str]:
    """A console open and one Bash permission request waiting: the root, where the hook's
    result lands, the request's id."""
    hooked.open_console()
    done = hooked.send_later("PermissionRequest-Bash")
    return str(hooked.project), done, waiting_request(hooked)


@pytest.mark.e2e
def test_with_no_console_open_the_hook_prints_nothing_and_records_that_nobody_decided(
    hooked: Bridge,
) -> None:
    result = hooked.send("PermissionRequest-Bash")
    assert chosen(result) is None and result.seconds < 5
    (request,) = Permissions(Project(hooked.project)).history()
    assert (request.agent, request.tool, request.subject) == (KEY, "Bash", COMMAND)
    assert request.decided_by == "nobody" and "no console was open" in request.outcome
    assert request.fields["suggestions"] == [
        f"allow access to {hooked.project} (session)",
        "switch to acceptEdits mode (session)",
    ]
    identity = hooked.identity()
    assert identity["activity"] == "waiting"
    assert identity["waiting_for"] == f"permission: Bash {COMMAND}"


@pytest.mark.e2e
def test_a_request_is_denied_from_the_cli_with_a_reason_the_model_receives(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    hooked.open_console()
    done = hooked.send_later("PermissionRequest-Bash")
    request_id = waiting_request(hooked)
    pending = cli("permissions", "pending", "--json", "--root", str(hooked.project)).json()
    assert [(r["id"], r["subject"], r["state"]) for r in pending] == [  # type: ignore[union-attr]
        (request_id, COMMAND, "pending")
    ]
    said = cli(
        "permissions", "decide", request_id, "--deny", "--message", "not on main",
        "--root", str(hooked.project),
    )  # fmt: skip
    assert said.code == 0 and "denied by operator: not on main" in said.out
    assert chosen(finished(done)) == {"behavior": "deny", "message": "not on main"}
    again = cli("permissions", "decide", request_id, "--allow", "--root", str(hooked.project))
    assert again.code == 1 and "already decided: denied by operator" in again.err
    history = cli("permissions", "history", "--json", "--root", str(hooked.project)).json()
    assert history[0]["decision"]["via"] == "cli"  # type: ignore[index]


@pytest.mark.e2e
def test_an_allowed_request_prints_allow_and_a_plain_deny_tells_the_model_who(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    hooked.open_console()
    done = hooked.send_later("PermissionRequest-Bash")
    first = waiting_request(hooked)
    assert cli("permissions", "decide", first, "--allow", "--root", str(hooked.project)).code == 0
    assert chosen(finished(done)) == {"behavior": "allow"}
    done = hooked.send_later("PermissionRequest-Edit")
    second = waiting_request(hooked)
    assert cli("permissions", "decide", second, "--deny", "--root", str(hooked.project)).code == 0
    assert chosen(finished(done)) == {"behavior": "deny", "message": files.DENIED}
    edit = Permissions(Project(hooked.project)).get(second)
    assert edit.subject == f"{hooked.project}/src/auth.py"
    assert edit.fields["diff_summary"] == "-1 +2 lines"
    assert edit.fields["suggestions"] == ["always allow Edit(src/**) (localSettings)"]


@pytest.mark.e2e
def test_a_request_decided_always_from_the_cli_leaves_a_rule_that_decides_the_next(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    root, done, request_id = one_bash_request(hooked)
    wrong = cli("permissions", "decide", request_id, "--allow", "--every-agent", "--root", root)
    assert wrong.code != 0 and "--every-agent goes with --always" in wrong.err
    said = cli(
        "permissions", "decide", request_id, "--allow", "--always", "--every-agent", "--json",
        "--root", root,
    )  # fmt: skip
    report = said.json()
    assert said.code == 0 and report["state"] == "allowed"  # type: ignore[index]
    assert report["rule"]["behavior"] == "allow"  # type: ignore[index]
    assert chosen(finished(done)) == {"behavior": "allow"}
    (rule,) = Permissions(Project(hooked.project)).rules()
    assert (rule.tool, rule.subject, rule.scope) == ("Bash", COMMAND, "all agents")
    again = hooked.send_later("PermissionRequest-Bash")
    assert chosen(finished(again)) == {"behavior": "allow"}  # by the rule, nobody asked


@pytest.mark.e2e
def test_rules_decide_at_once_and_a_deny_wins_over_an_allow(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    root = str(hooked.project)
    added = cli("permissions", "allow", "Bash", COMMAND, "--json", "--root", root).json()
    assert cli("permissions", "allow", "Bash", COMMAND, "--root", root).code == 0  # idempotent
    assert [r["id"] for r in cli("permissions", "list", "--json", "--root", root).json()] == [  # type: ignore[union-attr]
        added["id"]  # type: ignore[index]
    ]
    hooked.open_console()  # a rule decides whether or not a console is open
    assert chosen(hooked.send("PermissionRequest-Bash")) == {"behavior": "allow"}
    cli("permissions", "deny", "Bash", COMMAND, "--agent", KEY, "--root", root)
    denied = chosen(hooked.send("PermissionRequest-Bash"))
    assert denied is not None and denied["behavior"] == "deny"
    hooked.close_console()
    near = hooked.send("PermissionRequest-Bash", tool_input={"command": f"{COMMAND} "})
    assert chosen(near) is None  # a command that differs by a space is not matched
    history = Permissions(Project(hooked.project)).history()
    assert [r.decided_by for r in history] == ["rule", "rule", "nobody"]
    assert history[1].decision["rule"] != added["id"]  # type: ignore[index]
    assert cli("permissions", "remove", added["id"], "--root", root).code == 0  # type: ignore[index]
    assert len(cli("permissions", "list", "--json", "--root", root).json()) == 1  # type: ignore[arg-type]


@pytest.mark.e2e
def test_a_rule_for_another_agent_does_not_apply(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    root = str(hooked.project)
    cli("permissions", "allow", "Bash", COMMAND, "--agent", "claude-other-1", "--root", root)
    assert chosen(hooked.send("PermissionRequest-Bash")) is None  # no console: Claude Code asks


@pytest.mark.e2e
def test_after_the_wait_the_hook_prints_nothing_and_a_late_decision_is_refused(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    talisman = hooked.project / ".claude" / "talisman.yml"
    talisman.write_text("runeconsole:\n  claude:\n    permission_wait_seconds: 1\n")
    hooked.open_console()
    result = hooked.send("PermissionRequest-Bash")
    assert chosen(result) is None and result.seconds >= 1
    (request,) = Permissions(Project(hooked.project)).history()
    assert request.decided_by == "nobody" and "nobody answered within 1s" in request.outcome
    late = cli("permissions", "decide", request.id, "--allow", "--root", str(hooked.project))
    assert late.code == 1 and "already decided" in late.err


def test_an_id_is_checked_before_any_path_is_built(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    for bad in ("../../etc/passwd", "perm-a/b", "question-1", "perm-" + "x" * 200):
        said = cli("permissions", "decide", bad, "--allow", "--root", str(project))
        assert said.code == 2 and "not a permission request id" in said.err, bad


# -- the service, without the hook ------------------------------------------------------


def write_request(root: Path, pid: int | None = None, **more: object) -> Path:
    now = datetime.now(UTC)
    fields = files.request_fields(
        KEY, "Bash", {"command": COMMAND}, None, request_id=files.new_id(now), now=now,
        wait_seconds=60, **more,
    )  # fmt: skip
    fields["hook_pid"] = os.getpid() if pid is None else pid
    return files.write_request(ProjectPaths(root), fields)


def test_a_request_whose_hook_is_gone_is_closed_as_decided_by_nobody(project: Path) -> None:
    service = Permissions(Project(project))
    path = write_request(project, pid=2**22 + 12345)
    request = service.get(path.stem)
    with pytest.raises(Gone):
        service.decide(request.id, "allow")
    assert service.get(request.id).decided_by == "nobody"
    other = write_request(project, pid=2**22 + 12346)
    assert service.expire_orphans(service.requests()) == [other.stem]


def test_hostile_and_corrupt_files_are_listed_as_unreadable_and_crash_nothing(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    directory = ProjectPaths(project).claude_questions
    good = write_request(project)
    (directory / "perm-garbage.permission").write_bytes(b"\x00\xffnot json")
    (directory / "perm-list.permission").write_text("[1, 2]")
    (directory / "perm-link.permission").symlink_to("/etc/hostname")
    (directory / "perm-huge.permission").write_bytes(b"{" + b" " * (files.MAX_FILE + 1) + b"}")
    (directory / "perm-types.permission").write_text(json.dumps({"agent": 7, "tool_name": []}))
    (directory / "not-ours.permission").write_text("{}")  # not a request id: not listed
    files.decision_path(good).write_text("{half")
    rows = cli("permissions", "history", "--json", "--root", str(project)).json()
    states = {row["id"]: (row["state"], row["error"]) for row in rows}  # type: ignore[union-attr]
    assert set(states) == {
        "perm-garbage", "perm-list", "perm-link", "perm-huge", "perm-types", good.stem,
    }  # fmt: skip
    assert states["perm-link"] == ("unreadable", "a symbolic link (not followed)")
    assert states["perm-list"][1] == "expected a JSON object, found list"
    assert states[good.stem][0] == "unreadable" and "not valid JSON" in states[good.stem][1]
    assert states["perm-types"] == ("undecided", None)  # wrong types read as missing: not open
    assert cli("permissions", "pending", "--root", str(project)).code == 0
    said = cli("permissions", "decide", "perm-garbage", "--allow", "--root", str(project))
    assert said.code == 1 and "unreadable" in said.err


@pytest.mark.e2e
def test_a_corrupt_rules_file_is_reported_and_never_overwritten(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    rules = hooked.paths.state / "permission-rules.json"
    rules.write_text('{"format": 1, "rules": [{"behavior": "maybe"}]}')
    said = cli("permissions", "allow", "Bash", "ls", "--root", str(hooked.project))
    assert said.code == 1 and "permission-rules.json: unreadable" in said.err
    assert cli("permissions", "list", "--root", str(hooked.project)).code == 1
    assert rules.read_text() == '{"format": 1, "rules": [{"behavior": "maybe"}]}'
    assert chosen(hooked.send("PermissionRequest-Bash")) is None  # the hook goes on
    (request,) = Permissions(Project(hooked.project)).history()
    assert "not allow or deny" in request.fields["rules_error"]


@pytest.mark.e2e  # real processes racing, round after round
def test_the_operator_and_the_timeout_race_to_exactly_one_outcome(project: Path) -> None:
    """1,000 races: the hook giving up at the very moment the operator decides. Exactly one
    decision is recorded, and what the hook prints agrees with it."""
    service = Permissions(Project(project))
    paths = ProjectPaths(project)
    outcomes = {"operator": 0, "nobody": 0}
    for _ in range(1000):
        path = write_request(project)
        printed: list[str] = []
        start = threading.Barrier(2)

        def give_up(why: str, path: Path = path) -> None:
            files.write_decision(
                path, files.decision_fields(path.stem, None, files.NOBODY, reason=why)
            )

        def hook(
            path: Path = path, printed: list[str] = printed, start: threading.Barrier = start
        ) -> None:
            start.wait()
            found = waiting.give_up_unless_decided(
                paths, files.lock_name(path.stem), lambda: files.read_decision(path), give_up, "t"
            )
            printed.append(files.hook_output(found or {}))

        racer = threading.Thread(target=hook)
        racer.start()
        start.wait()
        with contextlib.suppress(AlreadyDecided):  # the hook gave up first
            service.decide(path.stem, "deny", message="no")
        racer.join()
        recorded = json.loads(files.decision_path(path).read_text())
        outcomes[recorded["decided_by"]] += 1
        assert printed == [files.hook_output(recorded)]
    assert sum(outcomes.values()) == 1000


@pytest.mark.e2e
def test_a_decision_at_the_moment_the_wait_runs_out_agrees_with_what_the_hook_printed(
    hooked: Bridge,
) -> None:
    """A few races through the real hook: the operator decides as the 1 s wait ends."""
    talisman = hooked.project / ".claude" / "talisman.yml"
    talisman.write_text("runeconsole:\n  claude:\n    permission_wait_seconds: 1\n")
    hooked.open_console()
    service = Permissions(Project(hooked.project))
    for delay in (0.9, 0.95, 1.0, 1.02, 1.05, 1.1):
        done = hooked.send_later("PermissionRequest-Bash")
        wait_until(lambda: len(service.pending()) == 1, timeout=30)
        (request,) = service.pending()
        asked = request.asked
        assert asked is not None
        wait_until(lambda: (datetime.now(UTC) - asked).total_seconds() >= delay, timeout=10)  # noqa: B023
        with contextlib.suppress(AlreadyDecided):
            service.decide(request.id, "deny", message="raced")
        recorded = service.get(request.id).decision
        assert recorded is not None
        said = chosen(finished(done))
        if recorded["decided_by"] == "operator":
            assert said == {"behavior": "deny", "message": "raced"}
        else:
            assert recorded["decided_by"] == "nobody" and said is None


def test_no_rule_is_made_from_a_command_too_long_to_keep_whole(project: Path) -> None:
    service = Permissions(Project(project))
    now = datetime.now(UTC)
    long_command = "echo " + "x" * files.MAX_SUBJECT
    fields = files.request_fields(
        KEY, "Bash", {"command": long_command}, None, request_id=files.new_id(now), now=now,
        wait_seconds=60,
    )  # fmt: skip
    assert fields["subject_truncated"] is True and len(fields["subject"]) == files.MAX_SUBJECT
    request = service.get(files.write_request(ProjectPaths(project), fields).stem)
    with pytest.raises(InvalidInput, match="not recorded whole"):
        service.decide_always(request, "allow", every_agent=True)
    assert service.rules() == [] and request.open


@pytest.mark.e2e
def test_a_request_decided_already_makes_no_rule_when_decided_always_again(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    root, done, request_id = one_bash_request(hooked)
    assert cli("permissions", "decide", request_id, "--deny", "--root", root).code == 0
    finished(done)
    late = cli("permissions", "decide", request_id, "--allow", "--always", "--root", root)
    assert late.code == 1 and "already decided" in late.err
    assert Permissions(Project(hooked.project)).rules() == []
