"""``runeconsole interrupted [--json] [--keep]``: operator actions a kill cut short (the
console's, or a command's), with what of each was written; the console says the same as
it opens. Each is cleared once listed, unless ``--keep``."""

from __future__ import annotations

import argparse

from runeconsole.cli.common import open_project, print_json
from runeconsole.services.journal import Journal


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    listing = subparsers.add_parser(
        "interrupted",
        parents=[common],
        help="actions a kill cut short (an answer, a decision, a rule, a queue change, a "
        "resume) and what of each was written",
    )
    listing.add_argument("--keep", action="store_true", help="list them without clearing them")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=show_interrupted)


def show_interrupted(args: argparse.Namespace) -> int:
    project = open_project(args, strict=False)
    journal = Journal(project.paths, project.via)
    found = journal.interrupted()
    if args.json:
        print_json([action.to_json() for action in found])
    elif not found:
        print("No action was cut short.")
    for action in found:
        if not args.json:
            print(action.message())
        if not args.keep:
            journal.dismiss(action)
    return 0
