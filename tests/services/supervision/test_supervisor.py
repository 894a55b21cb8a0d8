"""The supervisor against real tmux sessions on a private server."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.tmux import Tmux
from runeconsole.core.config import Talisman
from runeconsole.core.errors import RuneError
from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.locks import locked
from runeconsole.core.pids import pid_alive
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.pane_patterns import PaneReading
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.signals import Signals
from runeconsole.services.supervision.service import (
    HANDOFF_MESSAGE,
    SOCKET_ENV,
    AgentObservation,
    MonitorReport,
    Supervisor,
    SupervisorSettings,
)
from tests.support.polling import wait_until
from tests.support.tmux import fake_agent, monitoring, printer, sleeper


def make_supervisor(root: Path, socket: str, **settings: object) -> Supervisor:
    chosen = SupervisorSettings(socket_name=socket, **settings)  # type: ignore[arg-type]
    return Supervisor(Project(root), settings=chosen, tmux=Tmux(socket, config_file="/dev/null"))


@pytest.fixture
def supervisor(project: Path, tmux_socket: str) -> Supervisor:
    return make_supervisor(project, tmux_socket)


def signals(root: Path, signal_type: str) -> list[dict]:
    return [s.payload for s in Signals(Project(root)).pending(signal_type=signal_type)]


def exited(supervisor: Supervisor, session: str) -> bool:
    """Dead, and how it ended is known (tmux learns that a moment after the pane dies)."""
    pane = supervisor.tmux.pane(session)
    ended = pane is not None and (pane.exit_status is not None or pane.exit_signal is not None)
    return bool(pane and pane.dead and ended)


def screen_of(supervisor: Supervisor, key: str) -> str:
    return supervisor.pane_tail(key, lines=60)


def test_spawn_records_session_pid_command_and_initial_hook(
    supervisor: Supervisor, project: Path
) -> None:
    result = supervisor.spawn("worker", "parser", sleeper(), node_id="impl_search", bead_id="bd-7")
    record = Registry(Project(project)).get("worker-parser")
    assert record.get("tmux_session") == result.tmux_session == "rune-worker-parser"
    assert record.get("pid") == result.pid and pid_alive(result.pid)
    assert record.get("metadata")["command"] == sleeper()
    assert record.worktree == str(project.resolve())
    hook = HookFiles(Project(project)).get("worker-parser")
    assert (hook.get("current_node"), hook.get("current_bead")) == ("impl_search", "bd-7")
    assert hook.work_phase == "investigation"
    with pytest.raises(RuneError, match="already running"):
        supervisor.spawn("worker", "parser", sleeper())


def test_killed_session_is_crashed_once_and_respawned_with_wisdom(
    supervisor: Supervisor, project: Path
) -> None:
    key = "orchestrator-auth"
    first = supervisor.spawn("orchestrator", "auth", fake_agent(key, project, "--ask-every", "0"))
    wait_until(lambda: "Phase: investigation" in screen_of(supervisor, key))
    HookFiles(Project(project)).update(key, work_phase="testing", summary="token refresh endpoint")
    supervisor.tmux.kill_session(first.tmux_session)

    report = supervisor.monitor_step()
    assert report.crashed == [key]
    assert supervisor.monitor_step().crashed == []
    assert supervisor.monitor_step().crashed == []
    crashes = signals(project, "AGENT_CRASHED")
    assert [c["agent_id"] for c in crashes] == [first.record.get("agent_id")]
    assert Registry(Project(project)).get(key).status == "crashed"

    second = supervisor.respawn(key)
    predecessor = first.record.get("agent_id")
    assert second.record.get("predecessor_id") == predecessor
    assert second.record.get("metadata")["command"] == first.record.get("metadata")["command"]
    assert second.wisdom is not None and second.wisdom_file is not None
    sentence = (
        f"You are a continuation of {predecessor}. "
        "Resume from phase: testing, last working on: token refresh endpoint"
    )
    assert second.wisdom.startswith(sentence)
    assert second.wisdom_file.read_text().startswith(sentence)
    from_file = f"Resuming. You are a continuation of {predecessor}"  # via the env var's file
    wait_until(lambda: from_file in screen_of(supervisor, key))
    # Typed by the monitor once the new pane has drawn and shows no prompt, never blind.
    assert Registry(Project(project)).get(key).get("metadata")["pending_input"]
    typed = f"> You are a continuation of {predecessor}"
    wait_until(lambda: supervisor.monitor_step() and typed in screen_of(supervisor, key))
    assert not Registry(Project(project)).get(key).get("metadata")["pending_input"]
    assert [r.get("agent_id") for r in Registry(Project(project)).chain(key)] == [
        second.record.get("agent_id"),
        predecessor,
    ]
    assert supervisor.monitor_step().crashed == []


@pytest.mark.parametrize(
    ("script", "outcome", "reason"),
    [
        ("print('bye')", "terminated", "exited with status 0"),
        ("raise SystemExit(3)", "crashed", "exited with status 3"),
        ("import os; os.kill(os.getpid(), 9)", "crashed", "killed by signal 9"),
    ],
)
def test_exit_is_judged_by_how_it_ended(
    supervisor: Supervisor, project: Path, script: str, outcome: str, reason: str
) -> None:
    supervisor.spawn("worker", "done", [sys.executable, "-c", script])
    wait_until(lambda: exited(supervisor, "rune-worker-done"))
    report = supervisor.monitor_step()
    assert (report.terminated, report.crashed) == (
        (["worker-done"], []) if outcome == "terminated" else ([], ["worker-done"])
    )
    record = Registry(Project(project)).get("worker-done")
    assert record.status == outcome
    assert record.get("metadata")[f"{outcome}_reason"] == reason
    assert len(signals(project, "AGENT_CRASHED")) == (outcome == "crashed")
    assert not supervisor.tmux.has_session("rune-worker-done")  # dead pane cleared away
    if outcome == "terminated":
        assert "bye" in supervisor.pane_tail("worker-done")  # its last screen was kept
    assert supervisor.monitor_step().crashed == []


def test_clean_handoff_saves_hook_exits_and_respawns(supervisor: Supervisor, project: Path) -> None:
    key = "worker-billing"
    first = supervisor.spawn("worker", "billing", fake_agent(key, project))
    wait_until(lambda: "Phase: investigation" in screen_of(supervisor, key))
    (project / "invoice.py").write_text("unsaved = True\n")

    result = supervisor.handoff(key, timeout=20)

    assert result.outcome in ("exited", "hook_updated")
    assert result.waited_seconds < 15
    assert result.uncommitted == ["invoice.py"]
    assert (project / "invoice.py").read_text() == "unsaved = True\n"  # work left in place
    hook = HookFiles(Project(project)).get(key)
    assert "saved at handoff" in hook.get("work_summary")
    assert hook.files_modified == ["invoice.py"]
    assert not pid_alive(first.pid)
    successor = result.successor
    assert successor is not None
    assert successor.record.get("predecessor_id") == first.record.get("agent_id")
    assert "- invoice.py" in successor.wisdom
    archived = Registry(Project(project)).find_by_agent_id(first.record.get("agent_id"))
    assert archived.status == "terminated"
    assert [len(signals(project, t)) for t in ("HANDOFF_REQUESTED", "HANDOFF_COMPLETE")] == [1, 1]
    assert signals(project, "ORCHESTRATOR_STUCK") == []
    assert signals(project, "HANDOFF_COMPLETE")[0]["successor_id"] == successor.record.get(
        "agent_id"
    )
    wait_until(lambda: "continuation of" in screen_of(supervisor, key))


def test_hung_handoff_is_force_killed_after_the_timeout(
    supervisor: Supervisor, project: Path
) -> None:
    key = "orchestrator-stuck"
    first = supervisor.spawn("orchestrator", "stuck", fake_agent(key, project, "--hang-on-handoff"))
    wait_until(lambda: "Phase: investigation" in screen_of(supervisor, key))

    result = supervisor.handoff(key, timeout=1.0)

    assert result.outcome == "forced"
    assert 1.0 <= result.waited_seconds < 5
    assert not pid_alive(first.pid)  # survived the hang-up, not the kill
    assert HANDOFF_MESSAGE in supervisor.last_screen(first.record.get("agent_id"))
    stuck = signals(project, "ORCHESTRATOR_STUCK")
    assert [s["agent_id"] for s in stuck] == [first.record.get("agent_id")]
    assert signals(project, "HANDOFF_COMPLETE")[0]["outcome"] == "forced"
    assert result.successor is not None
    assert Registry(Project(project)).get(key).get("predecessor_id") == first.record.get("agent_id")


def test_monitor_reads_context_warns_once_per_level_and_sees_prompts(
    supervisor: Supervisor, project: Path
) -> None:
    echo = "import sys\nfor line in sys.stdin: print(line.strip(), flush=True)"
    spawned = supervisor.spawn("worker", "echo", [sys.executable, "-c", echo])
    pane = spawned.record.get("tmux_session")
    supervisor.tmux.send_text(pane, "Context left until auto-compact: 20%")
    wait_until(lambda: "20%" in screen_of(supervisor, "worker-echo"))
    first = supervisor.monitor_step()
    observed = first.observations["worker-echo"]
    assert (observed.screen.context_left, observed.urgency) == (20, "low")
    assert [(w.key, w.urgency) for w in first.warnings] == [("worker-echo", "low")]
    assert supervisor.monitor_step().warnings == []

    supervisor.tmux.send_text(pane, "Context left until auto-compact: 8%")
    wait_until(lambda: "8%" in screen_of(supervisor, "worker-echo"))
    assert [w.urgency for w in supervisor.monitor_step().warnings] == ["high"]
    supervisor.tmux.send_text(pane, "Context left until auto-compact: 12%")
    wait_until(lambda: "12%" in screen_of(supervisor, "worker-echo"))
    assert supervisor.monitor_step().warnings == []  # medium is below what was raised
    urgencies = [s["urgency"] for s in signals(project, "CONTEXT_WARNING")]
    assert urgencies == ["low", "high"]

    supervisor.tmux.send_text(pane, "Do you want to proceed?")
    supervisor.tmux.send_text(pane, "❯ 1. Yes")
    wait_until(lambda: "1. Yes" in screen_of(supervisor, "worker-echo").splitlines()[-1])
    observed = supervisor.monitor_step().observations["worker-echo"]
    assert observed.screen.waiting_for_input == "permission"
    assert observed.screen.context_left == 12  # the prompt hides the status line; figure kept
    saved = supervisor.observations()["worker-echo"]
    assert saved == observed
    kinds = [(p.key, p.kind) for p in supervisor.problems()]
    assert ("worker-echo", "waiting") in kinds


def test_high_urgency_hands_off_automatically_when_enabled(project: Path, tmux_socket: str) -> None:
    supervisor = make_supervisor(project, tmux_socket, auto_handoff=True, handoff_timeout=20)
    key = "orchestrator-full"
    first = supervisor.spawn(
        "orchestrator", "full", fake_agent(key, project, "--context", "9", "--drain", "0")
    )
    wait_until(lambda: "auto-compact: 9%" in screen_of(supervisor, key))
    report = supervisor.monitor_step()
    assert [(w.key, w.urgency) for w in report.warnings] == [(key, "high")]
    assert report.handoffs_started == [key]
    wait_until(lambda: signals(project, "HANDOFF_COMPLETE"), 30)  # the one it started
    assert [s["outcome"] for s in signals(project, "HANDOFF_COMPLETE")] in (
        ["exited"],
        ["hook_updated"],
    )
    successor = Registry(Project(project)).get(key)
    assert successor.get("predecessor_id") == first.record.get("agent_id")
    wait_until(lambda: "auto-compact: 100%" in screen_of(supervisor, key))
    assert supervisor.monitor_step().warnings == []


def test_medium_urgency_asks_for_a_checkpoint_when_cycling_is_on(
    project: Path, tmux_socket: str
) -> None:
    supervisor = make_supervisor(project, tmux_socket, auto_handoff=True)
    key = "worker-midway"
    supervisor.spawn(
        "worker", "midway", fake_agent(key, project, "--context", "14", "--drain", "0")
    )
    wait_until(lambda: "auto-compact: 14%" in screen_of(supervisor, key))
    report = supervisor.monitor_step()
    assert [(w.key, w.urgency) for w in report.warnings] == [(key, "medium")]
    assert report.handoffs_started == []
    assert [g["key"] for g in signals(project, "GUIDANCE")] == [key]
    wait_until(lambda: "Checkpoint saved to the hook." in screen_of(supervisor, key))
    assert "(checkpoint)" in HookFiles(Project(project)).get(key).summary


def test_phase_seen_on_screen_goes_into_the_hook(supervisor: Supervisor, project: Path) -> None:
    supervisor.spawn("worker", "phases", printer("⏺ Phase: testing"))
    wait_until(lambda: "Phase: testing" in screen_of(supervisor, "worker-phases"))
    report = supervisor.monitor_step()
    assert report.phase_changes == {"worker-phases": "testing"}
    assert HookFiles(Project(project)).get("worker-phases").work_phase == "testing"
    assert signals(project, "HOOK_UPDATED")[-1]["work_phase"] == "testing"
    assert supervisor.monitor_step().phase_changes == {}


def step_until(supervisor: Supervisor, probe: Callable[[MonitorReport], object]) -> MonitorReport:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        report = supervisor.monitor_step()
        if probe(report):
            return report
        time.sleep(0.1)
    raise AssertionError("the monitor never saw it")


def test_auto_respawn_stops_at_the_limit(project: Path, tmux_socket: str) -> None:
    supervisor = make_supervisor(project, tmux_socket, auto_respawn=True, respawn_limit=1)
    supervisor.spawn("worker", "loop", [sys.executable, "-c", "raise SystemExit(1)"])
    first = step_until(supervisor, lambda report: report.crashed)
    assert first.crashed == ["worker-loop"]
    assert [spawn.key for spawn in first.respawned] == ["worker-loop"]
    second = step_until(supervisor, lambda report: report.crashed)
    assert second.respawned == []
    assert any("limit (1) reached" in error for error in second.errors)
    assert len(Registry(Project(project)).chain("worker-loop")) == 2
    assert len(signals(project, "AGENT_CRASHED")) == 2
    assert Registry(Project(project)).get("worker-loop").status == "crashed"


def test_one_monitor_pass_at_a_time(supervisor: Supervisor) -> None:
    with locked(supervisor.paths.lock_for("monitor")):
        assert supervisor.monitor_step().skipped is True
    assert supervisor.monitor_step().skipped is False


def test_respawn_refuses_a_running_agent_and_kill_stops_it(
    supervisor: Supervisor, project: Path
) -> None:
    spawned = supervisor.spawn("worker", "busy", sleeper())
    with pytest.raises(RuneError, match="still running"):
        supervisor.respawn("worker-busy")
    (project / "draft.txt").write_text("keep me\n")
    record = supervisor.kill("worker-busy")
    assert record.status == "terminated"
    assert not pid_alive(spawned.pid)
    assert (project / "draft.txt").exists()
    assert HookFiles(Project(project)).get("worker-busy").files_modified == ["draft.txt"]
    assert supervisor.monitor_step().crashed == []


def test_agents_on_another_server_are_left_alone(supervisor: Supervisor, project: Path) -> None:
    Registry(Project(project)).register(
        "worker", "elsewhere", tmux_session="rune-x", metadata={"tmux_socket": "other-socket"}
    )
    report = supervisor.monitor_step()
    assert report.crashed == [] and "worker-elsewhere" not in report.observations


class CountingTmux(Tmux):
    """The real tmux adapter, counting the commands it runs."""

    def __init__(self, socket: str) -> None:
        super().__init__(socket, config_file="/dev/null")
        self.commands: list[str] = []

    def _run(self, *args: object, target: str | None = None):  # type: ignore[no-untyped-def]
        self.commands.append(str(args[0]))
        return super()._run(*args, target=target)


def test_a_pass_over_agents_none_of_them_supervised_starts_no_tmux_client(
    project: Path, tmux_socket: str
) -> None:
    tmux = CountingTmux(tmux_socket)
    chosen = SupervisorSettings(socket_name=tmux_socket)
    supervisor = Supervisor(Project(project), settings=chosen, tmux=tmux)
    for name in ("a", "b", "c"):  # heartbeating their own files: no tmux session
        Registry(Project(project)).register("worker", name)
    report = supervisor.monitor_step()
    assert report.observations == {} and tmux.commands == []
    supervisor.spawn("worker", "d", sleeper())
    report = supervisor.monitor_step()
    assert "list-panes" in tmux.commands and list(report.observations) == ["worker-d"]


def test_settings_precedence_and_validation(project: Path) -> None:
    atomic_write_bytes(
        project / ".claude/talisman.yml",
        b"runeconsole:\n  tmux:\n    socket_name: from-talisman\n"
        b"  supervisor:\n    context_warn_percent: 30\n    handoff_timeout_seconds: 5\n",
    )
    talisman = Talisman.load(project)
    settings = SupervisorSettings.from_talisman(talisman, environ={})
    assert (settings.socket_name, settings.warn_at, settings.handoff_timeout) == (
        "from-talisman",
        30,
        5,
    )
    assert SupervisorSettings.from_talisman(talisman, environ={SOCKET_ENV: "env"}).socket_name == (
        "env"
    )
    flagged = SupervisorSettings.from_talisman(
        talisman, socket_name="flag", environ={SOCKET_ENV: "e"}
    )
    assert flagged.socket_name == "flag"
    atomic_write_bytes(
        project / ".claude/talisman.yml",
        b"runeconsole:\n  supervisor:\n    context_warn_percent: 5\n",
    )
    with pytest.raises(RuneError, match=r"handoff .* <= checkpoint .* <= warn"):
        SupervisorSettings.from_talisman(Talisman.load(project), environ={})
    lenient = Talisman.load(project, strict=False)
    assert SupervisorSettings.from_talisman(lenient, environ={}).warn_at == 25
    assert lenient.problems
    atomic_write_bytes(
        project / ".claude/talisman.yml", b"runeconsole:\n  tmux:\n    socket_name: ../x\n"
    )
    with pytest.raises(RuneError, match=r"socket_name is '\.\./x'"):
        SupervisorSettings.from_talisman(Talisman.load(project), environ={})
    lenient = Talisman.load(project, strict=False)
    assert SupervisorSettings.from_talisman(lenient, environ={}).socket_name is None
    assert "socket_name" in lenient.problems[0]


def test_observations_file_is_json_for_other_readers(supervisor: Supervisor) -> None:
    supervisor.spawn("worker", "quiet", sleeper())
    supervisor.monitor_step()
    data = json.loads(supervisor.observations_path.read_text())
    assert data["agents"]["worker-quiet"]["state"] == "running"


def test_an_identity_registered_before_its_session_is_not_judged_yet(
    project: Path, tmux_socket: str, clock: ManualClock
) -> None:
    settings = SupervisorSettings(socket_name=tmux_socket)
    supervisor = Supervisor(Project(project, clock), settings=settings, tmux=Tmux(tmux_socket))
    supervisor.registry.register(
        "worker", "starting", tmux_session="rune-worker-starting",
        metadata={"tmux_socket": tmux_socket},
    )  # fmt: skip
    assert supervisor.monitor_step().crashed == []
    clock.advance(11)
    assert supervisor.monitor_step().crashed == ["worker-starting"]


def test_problems_most_urgent_first(project: Path, tmux_socket: str, clock: ManualClock) -> None:
    supervisor = Supervisor(
        Project(project, clock),
        settings=SupervisorSettings(socket_name=tmux_socket),
        tmux=Tmux(tmux_socket),
    )
    registry = supervisor.registry
    for name in ("asking", "crashed", "full", "quiet", "fine"):
        registry.register("worker", name)
    registry.mark_crashed("worker-crashed", "tmux session rune-worker-crashed is gone")
    clock.advance(400)
    for name in ("asking", "full", "fine"):
        registry.heartbeat(f"worker-{name}")

    def seen(key: str, **screen: object) -> AgentObservation:
        agent_id = registry.get(key).get("agent_id")
        reading = PaneReading(**screen)  # type: ignore[arg-type]
        urgency = supervisor.settings.urgency(reading)
        return AgentObservation(key, agent_id, None, "running", "", screen=reading, urgency=urgency)

    observations = {
        "worker-asking": seen("worker-asking", waiting_for_input="question", prompt="Which DB?"),
        "worker-full": seen("worker-full", context_left=4),
        "worker-fine": seen("worker-fine", context_left=80),
    }
    problems = [(p.key, p.kind, p.detail) for p in supervisor.problems(observations)]
    assert problems == [
        ("worker-crashed", "crashed", "tmux session rune-worker-crashed is gone"),
        ("worker-full", "context", "4% context left, time to hand off"),
        ("worker-quiet", "stale", "no heartbeat for 6m40s"),
        ("worker-asking", "waiting", "question: Which DB?"),
    ]


def test_jumping_to_an_agent_outside_tmux_says_how_to_attach(
    supervisor: Supervisor, tmux_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    supervisor.spawn("worker", "look", sleeper())
    monkeypatch.delenv("TMUX", raising=False)
    command = supervisor.attach_command("worker-look")
    assert command == ["tmux", "-L", tmux_socket, "attach-session", "-t", "=rune-worker-look"]
    with pytest.raises(RuneError, match=" ".join(command)):
        supervisor.switch_to("worker-look")


def test_console_talisman_is_lenient(project: Path) -> None:
    atomic_write_bytes(
        project / ".claude/talisman.yml",
        b"runeconsole:\n  heartbeat_interval_seconds: soon\n  supervisor:\n    respawn_limit: -1\n",
    )
    with pytest.raises(RuneError):
        Supervisor(Project(project))
    lenient = Project(project, strict=False)
    supervisor = Supervisor(lenient)
    assert supervisor.settings.respawn_limit == 3
    assert supervisor.registry.settings.heartbeat_interval == 60
    assert len(lenient.talisman.problems) >= 2


def test_context_problems_rank_by_urgency_then_context_left(
    project: Path, tmux_socket: str, clock: ManualClock
) -> None:
    supervisor = Supervisor(
        Project(project, clock),
        settings=SupervisorSettings(socket_name=tmux_socket),
        tmux=Tmux(tmux_socket),
    )
    registry = supervisor.registry
    lefts = {"a-low": 24, "b-low": 18, "c-medium": 14, "d-medium": 11, "e-high": 9, "f-high": 3}
    for name in lefts:
        registry.register("worker", name)

    def seen(key: str, left: int) -> AgentObservation:
        reading = PaneReading(context_left=left)
        urgency = supervisor.settings.urgency(reading)
        agent_id = registry.get(key).get("agent_id")
        return AgentObservation(key, agent_id, None, "running", "", screen=reading, urgency=urgency)

    observations = {f"worker-{n}": seen(f"worker-{n}", left) for n, left in lefts.items()}
    ordered = [p.key.removeprefix("worker-") for p in supervisor.problems(observations)]
    assert ordered == ["f-high", "e-high", "d-medium", "c-medium", "b-low", "a-low"]


def test_kills_are_never_taken_for_crashes_by_a_running_monitor(
    project: Path, tmux_socket: str
) -> None:
    operator = make_supervisor(project, tmux_socket, auto_respawn=True)
    names = [f"k{n}" for n in range(5)]
    spawned = [operator.spawn("worker", name, sleeper()) for name in names]
    # The monitor is another supervisor, as in the console or `runeconsole monitor`.
    monitor = make_supervisor(project, tmux_socket, auto_respawn=True)
    with monitoring(monitor, interval=0.0) as reports:
        wait_until(lambda: sum(not r.skipped for r in reports) >= 2)
        for name in names:
            assert operator.kill(f"worker-{name}").status == "terminated"
        seen = len(reports)
        wait_until(lambda: len(reports) >= seen + 5)
    assert signals(project, "AGENT_CRASHED") == []
    assert [key for r in reports for key in r.crashed + [s.key for s in r.respawned]] == []
    registry = Registry(Project(project))
    for name, first in zip(names, spawned, strict=True):
        record = registry.get(f"worker-{name}")
        assert (record.status, record.get("agent_id")) == (
            "terminated",
            first.record.get("agent_id"),
        )
        assert not pid_alive(first.pid)
    assert operator.tmux.panes() == {}


def test_an_agent_is_acted_on_where_it_was_spawned(
    project: Path, tmux_socket: str, other_tmux_socket: str
) -> None:
    home = make_supervisor(project, tmux_socket)
    first = home.spawn("worker", "far", printer("far away"))
    wait_until(lambda: "far away" in home.pane_tail("worker-far"))
    # A caller configured for another server (say, another $RUNECONSOLE_TMUX_SOCKET).
    away = make_supervisor(project, other_tmux_socket)
    assert "far away" in away.pane_tail("worker-far")
    assert away.attach_command("worker-far")[:3] == ["tmux", "-L", tmux_socket]
    with pytest.raises(RuneError, match="still running"):
        away.respawn("worker-far")
    result = away.handoff("worker-far", timeout=0.3, respawn=False)
    assert result.outcome == "forced" and not pid_alive(first.pid)

    second = away.respawn("worker-far")
    assert second.record.get("metadata")["tmux_socket"] == tmux_socket
    assert home.tmux.has_session("rune-worker-far")
    assert not away.tmux.has_session("rune-worker-far")

    named = make_supervisor(project, other_tmux_socket, socket_explicit=True)
    with pytest.raises(RuneError, match=f"on tmux server {tmux_socket}, not {other_tmux_socket}"):
        named.kill("worker-far")
    assert pid_alive(second.pid) and Registry(Project(project)).get("worker-far").status == "active"
    assert away.kill("worker-far").status == "terminated"
    assert not pid_alive(second.pid) and not home.tmux.has_session("rune-worker-far")


ECHO = "import sys\nfor line in sys.stdin: print(line.strip(), flush=True)"


def test_only_the_agents_own_hook_update_confirms_a_handoff(
    supervisor: Supervisor, project: Path
) -> None:
    """The monitor writes the hook too (the phase it reads on screen): that is no sign the
    agent saved its work, so the wait goes on; the agent's own update ends it."""
    supervisor.spawn("worker", "deaf", [sys.executable, "-c", ECHO])
    supervisor.tmux.send_text("=rune-worker-deaf:", "⏺ Phase: testing")
    wait_until(lambda: "Phase: testing" in screen_of(supervisor, "worker-deaf"))
    outcome: list[str] = []
    waiting = threading.Thread(
        target=lambda: outcome.append(supervisor.handoff("worker-deaf", timeout=4).outcome)
    )
    waiting.start()
    wait_until(lambda: signals(project, "HANDOFF_REQUESTED"))
    # The monitor's first look at the screen writes the phase into the hook.
    assert supervisor.monitor_step().phase_changes == {"worker-deaf": "testing"}
    assert waiting.is_alive()
    waiting.join(timeout=30)
    assert outcome == ["forced"]
    assert [s["key"] for s in signals(project, "ORCHESTRATOR_STUCK")] == ["worker-deaf"]

    supervisor.spawn("worker", "saver", [sys.executable, "-c", ECHO])
    waiting = threading.Thread(
        target=lambda: outcome.append(supervisor.handoff("worker-saver", timeout=2.5).outcome)
    )
    waiting.start()
    wait_until(lambda: len(signals(project, "HANDOFF_REQUESTED")) == 2)
    HookFiles(Project(project)).update(
        "worker-saver", work_phase="testing"
    )  # as `runeconsole hook update`
    waiting.join(timeout=30)
    assert outcome == ["forced", "hook_updated"]


def show_permission_prompt(supervisor: Supervisor, key: str) -> None:
    """An echo agent drawing a Claude-like permission prompt (Enter there means "Yes")."""
    for line in ("Do you want to proceed?", "❯ 1. Yes", "  2. No, and tell Claude (esc)"):
        supervisor.tmux.send_text(f"=rune-{key}:", line)
    wait_until(lambda: "(esc)" in screen_of(supervisor, key).splitlines()[-1])


def test_checkpoint_request_waits_while_a_prompt_is_on_screen(
    project: Path, tmux_socket: str
) -> None:
    supervisor = make_supervisor(project, tmux_socket, auto_handoff=True)
    key = "worker-asking"
    supervisor.spawn("worker", "asking", [sys.executable, "-c", ECHO])
    supervisor.tmux.send_text(f"=rune-{key}:", "Context left until auto-compact: 14%")
    show_permission_prompt(supervisor, key)
    report = supervisor.monitor_step()  # the figure sits above the prompt
    assert [(w.key, w.urgency) for w in report.warnings] == [(key, "medium")]
    assert report.observations[key].screen.menu
    supervisor.monitor_step()
    assert "GUARDIAN" not in screen_of(supervisor, key)  # not typed into the prompt
    assert signals(project, "GUIDANCE") == []
    supervisor.tmux.send_text(f"=rune-{key}:", "⏺ Done")  # someone answered it
    wait_until(lambda: screen_of(supervisor, key).endswith("⏺ Done"))
    step_until(
        supervisor, lambda _: "GUARDIAN: Context is running low" in screen_of(supervisor, key)
    )
    assert [g["key"] for g in signals(project, "GUIDANCE")] == [key]
    assert not Registry(Project(project)).get(key).get("metadata")["pending_input"]


def test_handoff_declines_a_prompt_with_esc_before_asking(
    supervisor: Supervisor, project: Path
) -> None:
    key = "worker-prompted"
    supervisor.spawn("worker", "prompted", fake_agent(key, project, "--ask-every", "1"))
    wait_until(lambda: supervisor.monitor_step().observations[key].screen.menu)
    result = supervisor.handoff(key, timeout=15, respawn=False)
    assert result.outcome in ("exited", "hook_updated")
    screen = supervisor.last_screen(result.predecessor_id or "")
    assert "Declined (esc)" in screen and "Chose" not in screen
    assert "saved at handoff" in HookFiles(Project(project)).get(key).summary


def test_handoff_never_types_into_a_menu_it_cannot_decline(
    supervisor: Supervisor, project: Path
) -> None:
    key = "worker-choosing"
    supervisor.spawn("worker", "choosing", [sys.executable, "-c", ECHO])
    for line in ("Select an option:", "❯ 1. Freeze the clock", "  2. Retry"):
        supervisor.tmux.send_text(f"=rune-{key}:", line)
    wait_until(lambda: "2. Retry" in screen_of(supervisor, key).splitlines()[-1])
    result = supervisor.handoff(key, timeout=1.0, respawn=False)
    assert result.outcome == "forced"
    assert HANDOFF_MESSAGE not in supervisor.last_screen(result.predecessor_id or "")
    assert [s["asked"] for s in signals(project, "ORCHESTRATOR_STUCK")] == [False]
