"""``runeconsole spawn|monitor|respawn|handoff|kill``: agents supervised in tmux."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.locks import LockBusy
from runeconsole.services.supervision.service import MonitorReport, Supervisor, SupervisorSettings


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    tmux = argparse.ArgumentParser(add_help=False, parents=[common])
    tmux.add_argument(
        "--tmux-socket",
        metavar="NAME",
        help="tmux server socket name (default: $RUNECONSOLE_TMUX_SOCKET, "
        "runeconsole.tmux.socket_name in talisman.yml, else tmux's default server)",
    )
    tmux.add_argument("--json", action="store_true")

    spawn = subparsers.add_parser(
        "spawn", parents=[tmux], help="register an agent and start COMMAND in its tmux session"
    )
    spawn.add_argument("--role", required=True)
    spawn.add_argument("--name", required=True)
    spawn.add_argument("--worktree", metavar="PATH", type=Path)
    spawn.add_argument("--node-id")
    spawn.add_argument("--bead-id")
    spawn.add_argument(
        "--background",
        action="store_true",
        help="a Claude Code background session (claude --bg) instead of a tmux session: "
        'give -- claude [OPTIONS] "TASK"',
    )
    spawn.add_argument("agent_command", nargs=argparse.REMAINDER, metavar="-- COMMAND")
    spawn.set_defaults(func=spawn_agent)

    monitor = subparsers.add_parser(
        "monitor", parents=[tmux], help="watch supervised agents: liveness, context, prompts"
    )
    monitor.add_argument("--once", action="store_true", help="one pass, then exit")
    monitor.add_argument("--interval", type=float, metavar="S", help="seconds between passes")
    monitor.set_defaults(func=run_monitor)

    respawn = subparsers.add_parser(
        "respawn", parents=[tmux], help="start a successor of a crashed or stopped agent"
    )
    respawn.add_argument("key", metavar="KEY", help="{role}-{name}")
    respawn.set_defaults(func=respawn_agent)

    handoff = subparsers.add_parser(
        "handoff", parents=[tmux], help="ask an agent to save and exit, then re-spawn it"
    )
    handoff.add_argument("key", metavar="KEY", help="{role}-{name}")
    handoff.add_argument("--timeout", type=float, metavar="S", help="force-kill after S seconds")
    handoff.add_argument("--no-respawn", action="store_true", help="stop it, start no successor")
    handoff.set_defaults(func=handoff_agent)

    kill = subparsers.add_parser(
        "kill", parents=[tmux], help="stop an agent (its worktree is left as it is)"
    )
    kill.add_argument("key", metavar="KEY", help="{role}-{name}")
    kill.set_defaults(func=kill_agent)


def supervisor_for(args: argparse.Namespace) -> Supervisor:
    project = open_project(args)
    settings = SupervisorSettings.from_talisman(project.talisman, socket_name=args.tmux_socket)
    return Supervisor(project, settings=settings)


def spawn_agent(args: argparse.Namespace) -> int:
    command = list(args.agent_command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise InvalidInput(
            "give the agent's command after --, e.g. runeconsole spawn ... -- claude"
        )
    if args.background:
        return _spawn_background(args, command)
    result = supervisor_for(args).spawn(
        args.role,
        args.name,
        command,
        worktree=args.worktree,
        node_id=args.node_id,
        bead_id=args.bead_id,
    )
    lines = [
        f"spawned {result.key} as {result.record.get('agent_id')} in tmux session "
        f"{result.tmux_session} (pid {result.pid})"
    ]
    if result.previous_hook is not None:
        lines.append(
            f"previous hook kept in {result.previous_hook} (a fresh start; "
            f"`runeconsole respawn {result.key}` continues from an agent's hook instead)"
        )
    return _emit(args, result.to_json(), *lines)


def _spawn_background(args: argparse.Namespace, command: list[str]) -> int:
    """``claude --bg``: the words after ``claude`` are its options and the task."""
    from runeconsole.services.claude.background.sessions import Background

    if Path(command[0]).name == "claude":
        command = command[1:]
    if args.node_id or args.bead_id:
        raise InvalidInput("--node-id and --bead-id are for agents in tmux")
    record = Background(open_project(args)).start(args.role, args.name, command, cwd=args.worktree)
    short = record.get("background_id")
    return _emit(
        args,
        record.to_json(),
        f"spawned {record.key} as Claude Code background session {short} "
        f"(runeconsole background logs {record.key}; attach, stop)",
    )


def respawn_agent(args: argparse.Namespace) -> int:
    result = supervisor_for(args).respawn(args.key)
    return _emit(
        args,
        result.to_json(),
        f"re-spawned {result.key} as {result.record.get('agent_id')} "
        f"(continuation of {result.record.get('predecessor_id')}) in {result.tmux_session}",
        f"wisdom: {result.wisdom_file}",
    )


def handoff_agent(args: argparse.Namespace) -> int:
    result = supervisor_for(args).handoff(
        args.key, timeout=args.timeout, respawn=not args.no_respawn
    )
    lines = [f"{result.key}: handoff {result.outcome} after {result.waited_seconds:.1f}s"]
    if result.uncommitted:
        lines.append(f"  uncommitted (left in place): {', '.join(result.uncommitted)}")
    if result.successor:
        successor = result.successor
        lines.append(f"  successor {successor.record.get('agent_id')} in {successor.tmux_session}")
    return _emit(args, result.to_json(), *lines)


def kill_agent(args: argparse.Namespace) -> int:
    record = supervisor_for(args).kill(args.key)
    return _emit(args, record.to_json(), f"{record.key}: {record.status}")


def _emit(args: argparse.Namespace, data: dict[str, Any], *lines: str) -> int:
    """``--json``: the result object; otherwise the lines for a person."""
    if args.json:
        print_json(data)
    else:
        print("\n".join(lines))
    return 0


def _print_report(report: MonitorReport, as_json: bool) -> None:
    if as_json:
        print_json(report.to_json())
    elif report.skipped:
        print(f"runeconsole: {_busy_message(report.other_monitor)}; skipped", file=sys.stderr)
    else:
        events = [f"crashed {key}" for key in report.crashed]
        events += [f"terminated {key}" for key in report.terminated]
        events += [f"re-spawned {spawn.key}" for spawn in report.respawned]
        events += [f"context {w.urgency} {w.key}" for w in report.warnings]
        events += [f"phase {key} -> {phase}" for key, phase in report.phase_changes.items()]
        events += [f"handoff {key}" for key in report.handoffs_started]
        line = f"{report.observed_at} {len(report.observations)} agent(s)"
        print(f"{line}: {'; '.join(events)}" if events else line)
    for error in report.errors:
        print(f"runeconsole: {error}", file=sys.stderr)
    sys.stdout.flush()


def _busy_message(pid: int | None) -> str:
    who = f"pid {pid}" if pid is not None else "another process"
    return f"another monitor ({who}) is running for this project"


def run_monitor(args: argparse.Namespace) -> int:
    """One monitor per project: a second one says whose it is and exits 1."""
    supervisor = supervisor_for(args)
    if args.once:
        report = supervisor.monitor_step()
        _print_report(report, args.json)
        return 1 if report.skipped else 0
    stop = threading.Event()
    try:
        supervisor.run_monitor(
            interval=args.interval,
            stop=stop,
            on_report=lambda report: _print_report(report, args.json),
            follow=False,
        )
    except LockBusy as busy:
        raise RuneError(
            f"{_busy_message(busy.holder)}; it keeps the agents supervised "
            "(the console follows it); stop it first to start another"
        ) from None
    except KeyboardInterrupt:
        stop.set()
    return 0
