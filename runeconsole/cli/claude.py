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
from typing import Any

from runeconsole.adapters.claude_settings import SCOPES, SettingsFile, settings_path
from runeconsole.cli.common import print_json, resolve_root
from runeconsole.core.errors import InvalidInput
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude import install as hooks_file
from runeconsole.services.claude import presence
from runeconsole.services.claude.hook import LOG_NAME


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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


def _path(scope: str, args: argparse.Namespace) -> Path:
    # The user's settings belong to no project: no root is needed for them.
    return settings_path(scope, Path.cwd() if scope == "user" else resolve_root(args))


def change_hooks(args: argparse.Namespace) -> int:
    path = _path(args.scope, args)
    if args.action == "install":
        change = hooks_file.plan_install(path)
    else:
        change = hooks_file.plan_uninstall(path)
    if args.dry_run:
        print(change.text, end="")
        return 0
    change.apply()
    events = sorted(hooks_file.installed(change.after))
    if args.json:
        print_json(
            {
                "scope": args.scope,
                "path": str(path),
                "changed": change.changed,
                "backup": str(change.backup) if change.backup else None,
                "events": events,
            }
        )
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
        print(f"events: {', '.join(events)}")
    return 0


def scope_status(scope: str, path: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"scope": scope, "path": str(path), "events": [], "current": False}
    try:
        data = SettingsFile.read(path).data
    except InvalidInput as exc:
        row["error"] = exc.message
        return row
    found = hooks_file.installed(data)
    wanted = {event for event, _, _ in hooks_file.HOOK_EVENTS}
    command = hooks_file.hook_command()
    row["events"] = sorted(found)
    row["complete"] = wanted <= set(found)
    row["current"] = bool(found) and all(c == command for cs in found.values() for c in cs)
    row["commands"] = sorted({c for cs in found.values() for c in cs})
    return row


def _describe(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"unreadable: {row['error']}"
    if not row["events"]:
        return "not installed"
    total = len(hooks_file.HOOK_EVENTS)
    text = f"installed ({len(row['events'])} of {total} events)"
    if not row["current"]:
        text += f"; another command: {', '.join(row['commands'])} (run install again)"
    return text


def show_status(args: argparse.Namespace) -> int:
    root = resolve_root(args)
    paths = ProjectPaths(root)
    rows = [scope_status(scope, settings_path(scope, root)) for scope in SCOPES]
    pid = presence.console_pid(paths)
    is_open = presence.console_open(paths)
    log = paths.claude_bridge / LOG_NAME
    lines = _log_lines(log)
    if args.json:
        print_json(
            {
                "root": str(root),
                "command": hooks_file.hook_command(),
                "scopes": rows,
                "console_open": is_open,
                "console_pid": pid,
                "log": str(log),
                "log_lines": len(lines),
                "last_log_line": lines[-1] if lines else None,
            }
        )
        return 0
    width = max(len(row["path"]) for row in rows)
    for row in rows:
        print(f"{row['scope']:8} {row['path'].ljust(width)}  {_describe(row)}")
    if is_open:
        print(f"console: open{f' (pid {pid})' if pid else ''}: AskUserQuestion calls come to it")
    else:
        print("console: not open: AskUserQuestion calls are asked in Claude Code's own dialog")
    if lines:
        print(f"hook log: {log} ({len(lines)} lines; last: {lines[-1]})")
    return 0


def _log_lines(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [line.rstrip("\n") for line in handle]
    except OSError:
        return []


def run_hook(args: argparse.Namespace) -> int:
    from runeconsole.services.claude.hook import main

    return main()
