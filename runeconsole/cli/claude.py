"""``runeconsole claude install|uninstall|status|hook``: the bridge from Claude Code's hooks.

``install`` merges our hook entries into a Claude Code settings file (``--scope local``,
the default: ``.claude/settings.local.json``; ``project``: ``.claude/settings.json``;
``user``: ``~/.claude/settings.json``), keeping everything else; ``uninstall`` takes out
exactly ours; ``status`` says which scopes have them and whether a console is open to
answer questions. ``hook`` is what Claude Code runs (``python -m runeconsole claude hook``
goes there without this parser).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from runeconsole.adapters.claude_settings import SCOPES, settings_path
from runeconsole.cli.common import print_json, resolve_root
from runeconsole.services.claude import install as hooks_file
from runeconsole.services.claude import statusline_install
from runeconsole.services.claude.status import BridgeStatus


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = subparsers.add_parser(
        "claude", help="Claude Code hooks: install, uninstall, status (and the hook itself)"
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, helptext in (
        ("install", "merge runeconsole's hook entries into a Claude Code settings file"),
        ("uninstall", "take runeconsole's hook entries out of a Claude Code settings file"),
    ):
        sub = actions.add_parser(name, parents=[common], help=helptext)
        sub.add_argument(
            "--scope",
            choices=SCOPES,
            default="local",
            help="local: .claude/settings.local.json (default); project: .claude/settings.json; "
            "user: ~/.claude/settings.json",
        )
        sub.add_argument(
            "--dry-run", action="store_true", help="print the resulting file; change nothing"
        )
        sub.add_argument("--json", action="store_true")
        sub.set_defaults(func=change_hooks)
    status = actions.add_parser(
        "status", parents=[common], help="which scopes have the hooks; is a console open"
    )
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=show_status)
    hook = actions.add_parser(
        "hook",
        help="run one hook event (Claude Code runs this: JSON on stdin; exit 0 always)",
    )
    hook.set_defaults(func=run_hook)
    line = actions.add_parser(
        "statusline",
        help="Claude Code's status line (Claude Code runs this: its JSON on stdin), with "
        "the user's own status line command chained after it",
    )
    line.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    line.set_defaults(func=run_statusline)


def _root(scope: str, args: argparse.Namespace) -> Path:
    # The user's settings belong to no project: no root is needed for them.
    return Path.cwd() if scope == "user" else resolve_root(args)


def change_hooks(args: argparse.Namespace) -> int:
    root = _root(args.scope, args)
    path = settings_path(args.scope, root)
    if args.action == "install":
        beneath = statusline_install.in_effect_beneath(args.scope, root)
        change = hooks_file.plan_install(path, beneath=beneath)
    else:
        change = hooks_file.plan_uninstall(path)
    if args.dry_run:
        print(change.text, end="")
        return 0
    change.apply()
    if args.json:
        print_json(change.to_json(args.scope))
        return 0
    done = "installed" if args.action == "install" else "uninstalled"
    if not change.changed:
        state = "already installed" if args.action == "install" else "not installed"
        print(f"{state} in {path}: nothing changed")
        return 0
    print(f"{done} runeconsole's Claude Code hooks in {path}")
    if change.backup:
        print(f"the previous file is kept as {change.backup}")
    if args.action == "install":
        print(f"events: {', '.join(change.events)}")
        print(f"status line: {change.status_line}")
    elif change.restored is not None:
        print("the file is back as it was before the install, byte for byte")
    return 0


def show_status(args: argparse.Namespace) -> int:
    status = BridgeStatus.read(resolve_root(args))
    if args.json:
        print_json(status.to_json())
        return 0
    width = max(len(str(scope.path)) for scope in status.scopes)
    for scope in status.scopes:
        print(f"{scope.scope:8} {str(scope.path).ljust(width)}  {scope.describe()}")
    pid = status.console_pid
    if status.console_open:
        print(f"console: open{f' (pid {pid})' if pid else ''}: AskUserQuestion calls come to it")
    else:
        print("console: not open: AskUserQuestion calls are asked in Claude Code's own dialog")
    if status.log_lines:
        lines = status.log_lines
        print(f"hook log: {status.log} ({len(lines)} lines; last: {lines[-1]})")
    return 0


def run_hook(args: argparse.Namespace) -> int:
    from runeconsole.services.claude.hook import main

    return main()


def run_statusline(args: argparse.Namespace) -> int:
    from runeconsole.services.claude.statusline import main

    return main(list(args.rest))
