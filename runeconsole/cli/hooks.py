"""``runeconsole hook show|update``: an agent's work state, for agents and orchestrators."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.control import printable
from runeconsole.core.errors import RuneError
from runeconsole.services.hooks import HARNESS_PHASES, Hook, Hooks
from runeconsole.services.pane_patterns import WORK_PHASES
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry

SHOWN = (
    ("phase", "phase"),
    ("work_phase", "work phase"),
    ("work_summary", "summary"),
    ("current_node", "node"),
    ("current_bead", "bead"),
    ("tests_status", "tests"),
    ("resumption_instructions", "instructions"),
    ("predecessor_hook_id", "predecessor"),
    ("updated_at", "updated"),
    ("updated_by", "updated by"),
)


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    hook = subparsers.add_parser("hook", help="show or update an agent's hook (its work state)")
    actions = hook.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", parents=[common], help="print the hook of KEY")
    show.add_argument("key", metavar="KEY", help="{role}-{name}")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=show_hook)
    update = actions.add_parser(
        "update",
        parents=[common],
        help="change fields of the hook of KEY (files_modified is always read from git)",
    )
    update.add_argument("key", metavar="KEY", help="{role}-{name}")
    update.add_argument("--phase", choices=HARNESS_PHASES)
    update.add_argument("--work-phase", choices=WORK_PHASES)
    update.add_argument("--summary", help="what the agent is working on")
    update.add_argument("--bead", metavar="ID")
    update.add_argument("--node", metavar="ID")
    update.add_argument("--tests-status", metavar="TEXT")
    update.add_argument("--instructions", metavar="TEXT", help="how a successor should resume")
    update.add_argument("--json", action="store_true")
    update.set_defaults(func=update_hook)


def show_hook(args: argparse.Namespace) -> int:
    hook = Hooks(open_project(args, strict=False)).get(args.key)
    if args.json:
        print_json(hook.to_json())
        return 0
    _print(hook)
    return 0


def _print(hook: Hook) -> None:
    print(f"{hook.key}  ({hook.path})")
    for name, label in SHOWN:
        value = hook.get(name)
        if value not in (None, ""):
            print(f"  {label + ':':<14}{printable(str(value))}")
    files = hook.files_modified
    print(f"  {'uncommitted:':<14}{len(files)} file(s)")
    for name in files:
        print(f"    {printable(name)}")


def _worktree(project: Project, key: str) -> Path | None:
    """The agent's own worktree from its identity (a relative one is the project root's):
    where git says what is uncommitted."""
    with contextlib.suppress(RuneError):
        worktree = Registry(project).get(key).worktree_in(project.root)
        if worktree and worktree.is_dir():
            return worktree
    return None


def update_hook(args: argparse.Namespace) -> int:
    # Lenient: an agent recording its work state must not be stopped by a talisman typo.
    project = open_project(args, strict=False)
    hook = Hooks(project).update(
        args.key,
        phase=args.phase,
        work_phase=args.work_phase,
        summary=args.summary,
        bead=args.bead,
        node=args.node,
        tests_status=args.tests_status,
        instructions=args.instructions,
        worktree=_worktree(project, args.key),
    )
    if args.json:
        print_json(hook.to_json())
    else:
        print(f"{hook.key}: hook updated at {hook.get('updated_at')}")
    return 0
