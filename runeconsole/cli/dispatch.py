"""``runeconsole new``, ``task list|show|compare|test|pick|drop``, ``worktrees [clean]``:
starting work in fresh worktrees, comparing attempts, and the worktrees' whole life."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.core.errors import InvalidInput, UnreadableFile
from runeconsole.core.files import read_bytes
from runeconsole.services.dispatch.creation import MAX_COUNT, NewTask
from runeconsole.services.dispatch.service import AttemptView, Dispatch, Ending
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings

TINTS = {
    "working": "green",
    "ready": "yellow",
    "queued": "yellow",
    "landed": "green",
    "dropped": "red",
    "orphan": "red",
    "missing": "red",
    "main": "dim",
}


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    shared = argparse.ArgumentParser(add_help=False, parents=[common])
    shared.add_argument("--json", action="store_true", help="the result as JSON")
    shared.add_argument("--tmux-socket", metavar="NAME", help="tmux server socket name")

    new = subparsers.add_parser(
        "new",
        parents=[shared],
        help="start a task: agents in fresh worktrees, one per attempt",
        description="Start a task: for each attempt a branch agent/ROLE-NAME from the base, "
        "a worktree in runeconsole.worktrees.dir, the project's untracked files and Claude "
        "Code's hooks there, the setup command run, then Claude Code started with the task.",
    )
    what = new.add_mutually_exclusive_group(required=True)
    what.add_argument("--task", metavar="TEXT", help="the task, the agent's first prompt")
    what.add_argument("--task-file", metavar="FILE", type=Path, help="the task, from a file")
    new.add_argument(
        "--count", type=int, default=1, help=f"attempts side by side (1 to {MAX_COUNT}; default 1)"
    )
    new.add_argument("--base", metavar="REF", help="default: merge_queue.main_branch")
    new.add_argument("--role", default="worker", help="the agents' role (default worker)")
    new.add_argument("--name", help="default: suggested from the task")
    new.add_argument("--model", help="Claude Code's --model (default: its own)")
    new.add_argument("--permission-mode", metavar="MODE", help="Claude Code's --permission-mode")
    new.add_argument("--background", action="store_true", help="claude --bg, not tmux")
    new.add_argument("--node-id", help="the pipeline node the agents work on")
    new.add_argument("--bead-id", help="the bead the agents work on")
    new.set_defaults(func=new_task)

    task = subparsers.add_parser(
        "task",
        help="a task's attempts: list, compare, test, pick",
        description="The tasks runeconsole new started: compare their attempts, run the "
        "tests in each, pick one into the merge queue, or drop them all.",
    )
    actions = task.add_subparsers(dest="task_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[shared], help="every task")
    listing.set_defaults(func=list_tasks)
    for name, func, text in (
        ("show", show_task, "a task and its attempts"),
        ("compare", compare_task, "its attempts side by side"),
    ):
        one = actions.add_parser(name, parents=[shared], help=text)
        one.add_argument("task_id", metavar="TASK")
        one.set_defaults(func=func)
    test = actions.add_parser("test", parents=[shared], help="run the test command in each")
    test.add_argument("task_id", metavar="TASK")
    test.add_argument("attempt", metavar="ATTEMPT", type=int, nargs="?")
    test.set_defaults(func=test_task)
    pick = actions.add_parser(
        "pick", parents=[shared], help="approve one attempt; the others are removed"
    )
    pick.add_argument("task_id", metavar="TASK")
    pick.add_argument("attempt", metavar="ATTEMPT", type=int)
    pick.add_argument(
        "--discard-commits",
        action="store_true",
        help="lose the other attempts' commits found on no other branch",
    )
    pick.set_defaults(func=pick_attempt)
    drop = actions.add_parser("drop", parents=[shared], help="stop every attempt, remove them")
    drop.add_argument("task_id", metavar="TASK")
    drop.add_argument(
        "--discard-commits",
        action="store_true",
        help="lose the attempts' commits found on no other branch",
    )
    drop.set_defaults(func=drop_task)

    worktrees = subparsers.add_parser(
        "worktrees",
        parents=[shared],
        help="every git worktree: agent, task, state, files",
        description="Every git worktree of the repository with its agent, task, state, "
        "uncommitted files and size; clean removes the landed and dropped ones when nothing "
        "would be lost.",
    )
    worktrees.add_argument(
        "action", nargs="?", choices=["clean"], help="clean: remove the landed and dropped ones"
    )
    worktrees.add_argument("--dry-run", action="store_true", help="say what clean would do")
    worktrees.set_defaults(func=worktrees_command)


def dispatch_for(args: argparse.Namespace) -> Dispatch:
    project = open_project(args)
    settings = SupervisorSettings.from_talisman(project.talisman, socket_name=args.tmux_socket)
    dispatch = Dispatch(project, supervisor=Supervisor(project, settings=settings))
    for said in dispatch.recover():
        print(f"runeconsole: a creation cut short: {said}", file=sys.stderr)
    return dispatch


def _task_text(args: argparse.Namespace) -> str:
    if args.task is not None:
        return str(args.task)
    try:
        return read_bytes(args.task_file, pipes=True).decode("utf-8")
    except UnreadableFile as exc:
        raise InvalidInput(f"--task-file {args.task_file}: {exc.reason}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"--task-file {args.task_file} is not UTF-8 text") from None


def new_task(args: argparse.Namespace) -> int:
    request = NewTask(
        text=_task_text(args),
        count=args.count,
        base=args.base,
        role=args.role,
        name=args.name,
        model=args.model,
        permission_mode=args.permission_mode,
        background=args.background,
        node_id=args.node_id,
        bead_id=args.bead_id,
    )
    task = dispatch_for(args).new(request)
    if args.json:
        print_json(task.to_json())
        return 0 if task.state != "dropped" else 1
    print(f"task {task.task_id}: {task.state}")
    for attempt in task.attempts:
        where = attempt.get("worktree")
        said = attempt.get("error") or f"{attempt.agent} on {attempt.branch} in {where}"
        print(f"  {attempt.number}  {attempt.state:12} {said}")
    return 0 if task.state != "dropped" else 1


def list_tasks(args: argparse.Namespace) -> int:
    tasks = dispatch_for(args).tasks()
    if args.json:
        print_json([t.to_json() for t in tasks])
        return 0
    if not tasks:
        print("no tasks (`runeconsole new --task TEXT` starts one)")
        return 0
    rows = [
        [t.task_id, t.state, str(len(t.attempts)), str(t.pick or "-"), t.error or t.title()]
        for t in tasks
    ]
    print_table(["TASK", "STATE", "ATTEMPTS", "PICK", "TEXT"], rows, ["default"] * len(rows))
    return 0


def show_task(args: argparse.Namespace) -> int:
    task = dispatch_for(args).task(args.task_id)
    if args.json:
        print_json(task.to_json())
        return 0
    print(
        f"task {task.task_id} ({task.state}), base {task.get('base')}, created "
        f"{task.get('created_at')}"
    )
    print(task.text)
    for attempt in task.attempts:
        print(f"  {attempt.number}  {attempt.agent:24} {attempt.state:12} {attempt.branch}")
        for field in ("error", "kept_because"):
            if attempt.get(field):
                print(f"       {attempt.get(field)}")
    return 0


def compare_rows(views: list[AttemptView]) -> list[list[str]]:
    rows = []
    for view in views:
        test = view.test
        tested = "-" if test is None else ("pass" if test.get("ok") else "FAIL")
        changes = "?" if view.added is None else f"+{view.added} -{view.removed}"
        cost = "-" if view.cost_usd is None else f"${view.cost_usd:.2f}"
        took = "-" if view.seconds is None else f"{view.seconds / 60:.0f}m"
        rows.append(
            [
                str(view.attempt.number),
                view.attempt.agent,
                view.attempt.state,
                view.activity or "-",
                changes,
                str(len(view.files)),
                tested,
                cost,
                took,
            ]
        )
    return rows


def compare_task(args: argparse.Namespace) -> int:
    views = dispatch_for(args).compare(args.task_id)
    if args.json:
        print_json([v.to_json() for v in views])
        return 0
    rows = compare_rows(views)
    print_table(
        ["#", "AGENT", "STATE", "ACTIVITY", "±", "FILES", "TESTS", "COST", "TIME"],
        rows,
        ["default"] * len(rows),
    )
    return 0


def test_task(args: argparse.Namespace) -> int:
    attempts = dispatch_for(args).test(args.task_id, args.attempt)
    chosen = [a for a in attempts if args.attempt is None or a.number == args.attempt]
    if args.json:
        print_json([a.fields for a in chosen])
    else:
        for attempt in chosen:
            test = attempt.get("test") or {}
            print(f"  {attempt.number}  {attempt.agent:24} {test.get('message')}")
    return 0 if all((a.get("test") or {}).get("ok") for a in chosen) else 1


def _ending(args: argparse.Namespace, ending: Ending, done: str) -> int:
    if args.json:
        print_json(ending.to_json())
        return 0
    print(done)
    for removal in ending.removals:
        print(f"  {removal.describe()}")
    return 0


def pick_attempt(args: argparse.Namespace) -> int:
    ending = dispatch_for(args).pick(
        args.task_id, args.attempt, discard_commits=args.discard_commits
    )
    entry = (ending.approval or {}).get("entry") or {}
    return _ending(
        args,
        ending,
        f"picked attempt {args.attempt} of {args.task_id}: queued as {entry.get('entry_id')}",
    )


def drop_task(args: argparse.Namespace) -> int:
    ending = dispatch_for(args).drop(args.task_id, discard_commits=args.discard_commits)
    return _ending(args, ending, f"dropped {args.task_id}")


def _size(size: int | None) -> str:
    if size is None:
        return "?"
    for unit in ("B", "K", "M", "G"):
        if size < 1024:
            return f"{size:.0f}{unit}"
        size //= 1024
    return f"{size}T"


def worktrees_command(args: argparse.Namespace) -> int:
    dispatch = dispatch_for(args)
    if args.action == "clean":
        removals = dispatch.clean(dry_run=args.dry_run)
        if args.json:
            print_json([r.to_json() for r in removals])
        elif not removals:
            print("nothing to clean: no landed or dropped worktrees")
        else:
            for removal in removals:
                print(removal.describe())
        return 0
    rows = dispatch.worktrees()
    if args.json:
        print_json([r.to_json() for r in rows])
        return 0
    root = dispatch.root
    table: list[list[Any]] = []
    for row in rows:
        path = row.path.relative_to(root) if row.path.is_relative_to(root) else row.path
        table.append(
            [
                row.state,
                str(path) or ".",
                row.branch or "(detached)",
                row.agent or "-",
                row.task or "-",
                str(len(row.dirty)),
                _size(row.size),
                row.note or (f"locked: {row.locked}" if row.locked is not None else ""),
            ]
        )
    print_table(
        ["STATE", "WORKTREE", "BRANCH", "AGENT", "TASK", "DIRTY", "SIZE", "NOTE"],
        table,
        [TINTS.get(r.state, "default") for r in rows],
    )
    return 0
