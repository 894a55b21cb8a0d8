"""``runeconsole resume AGENT`` and ``runeconsole fork AGENT``: an agent's Claude Code
session continued by a new supervised agent (``services/dispatch/continuing.py``)."""

from __future__ import annotations

import argparse

from runeconsole.cli.common import print_json
from runeconsole.cli.dispatch import dispatch_for
from runeconsole.services.dispatch.continuing import Continued, Continuing


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    shared = argparse.ArgumentParser(add_help=False, parents=[common])
    shared.add_argument("agent", metavar="AGENT", help="the agent's key, {role}-{name}")
    shared.add_argument("--json", action="store_true", help="the result as JSON")
    shared.add_argument("--tmux-socket", metavar="NAME", help="tmux server socket name")
    shared.add_argument("--model", help="Claude Code's --model (default: the agent's)")
    shared.add_argument(
        "--permission-mode", metavar="MODE", help="Claude Code's --permission-mode (the agent's)"
    )
    resume = subparsers.add_parser(
        "resume",
        parents=[shared],
        help="continue an ended agent's Claude Code session (claude --resume)",
        description="Continue an ended (crashed, terminated or stopped) agent's Claude Code "
        "session with claude --resume ID in its worktree, supervised in tmux, as a new "
        "identity whose predecessor is the ended one. A live agent is refused.",
    )
    resume.set_defaults(func=resume_agent)
    fork = subparsers.add_parser(
        "fork",
        parents=[shared],
        help="copy an agent's Claude Code session into a new agent (--fork-session)",
        description="Start a new agent of the same role on a copy of the agent's Claude Code "
        "session (claude --resume ID --fork-session), in the same worktree or, with "
        "--new-worktree, in a fresh one on branch agent/ROLE-NAME from the commit the agent's "
        "worktree has checked out.",
    )
    fork.add_argument("--name", help="the new agent's name (default: NAME-fork)")
    fork.add_argument(
        "--new-worktree", action="store_true", help="in a new worktree from the same commit"
    )
    fork.add_argument(
        "--at",
        metavar="UUID",
        help="fork at this entry of the conversation (its uuid): what came after is left out",
    )
    fork.set_defaults(func=fork_agent)


def _done(args: argparse.Namespace, result: Continued) -> int:
    if args.json:
        print_json(result.to_json())
    else:
        print(result.describe())
    return 0


def resume_agent(args: argparse.Namespace) -> int:
    continuing = Continuing(dispatch_for(args))
    result = continuing.resume(args.agent, model=args.model, permission_mode=args.permission_mode)
    return _done(args, result)


def fork_agent(args: argparse.Namespace) -> int:
    continuing = Continuing(dispatch_for(args))
    result = continuing.fork(
        args.agent,
        name=args.name,
        new_worktree=args.new_worktree,
        at=args.at,
        model=args.model,
        permission_mode=args.permission_mode,
    )
    return _done(args, result)
