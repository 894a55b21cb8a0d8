"""``runeconsole outputs verify``: sub-agent output files and the persistence gate."""

from __future__ import annotations

import argparse
from pathlib import Path

from runeconsole.cli.common import print_json, resolve_root
from runeconsole.services.outputs import session_dir_from_live_state, verify


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = subparsers.add_parser("outputs", help="sub-agent output files and persistence gates")
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "verify", parents=[common],
        help="valid = non-empty, the exact last line <!-- AGENT_COMPLETE -->; exit 1 on HARD_FAIL",
    )  # fmt: skip
    check.add_argument(
        "session_dir", nargs="?", type=Path, metavar="SESSION_DIR",
        help="default: live.dir from .cwf/cwf-state.yaml",
    )  # fmt: skip
    check.add_argument("--critical", nargs="+", action="extend", default=[], metavar="NAME")
    check.add_argument("--optional", nargs="+", action="extend", default=[], metavar="NAME")
    check.add_argument("--json", action="store_true")
    check.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    session_dir = args.session_dir
    if session_dir is None:
        session_dir = session_dir_from_live_state(resolve_root(args))
    result = verify(session_dir, args.critical, args.optional)
    if args.json:
        print_json(result.to_json())
    else:
        print("\n".join(result.lines()))
    return result.exit_code
