"""The options of a fake agent (``runeconsole.demo.fake_agent``): how it is paced and
what it is scripted to do, and when."""

from __future__ import annotations

import argparse
from pathlib import Path


def options() -> argparse.ArgumentParser:
    """The fake agent's command line (``fake_agent.command`` builds it)."""
    parser = argparse.ArgumentParser(prog="python -m runeconsole.demo.fake_agent")
    parser.add_argument("--key", required=True, help="{role}-{name} of this agent")
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--tick", type=float, default=1.0, help="seconds per scripted step")
    parser.add_argument("--heartbeat", type=float, default=5.0, help="seconds between heartbeats")
    parser.add_argument(
        "--context",
        type=float,
        default=80.0,
        help="context left at start (%%); a continuation starts at 100",
    )
    parser.add_argument("--drain", type=float, default=1.0, help="context spent per step (%%)")
    parser.add_argument("--phase-ticks", type=int, default=5, help="steps per work phase")
    parser.add_argument("--ask-every", type=int, default=0, help="ask about every N steps")
    parser.add_argument("--write-files", action="store_true", help="leave uncommitted notes")
    parser.add_argument("--hang-on-handoff", action="store_true")
    parser.add_argument("--crash-after", type=float, default=0.0, help="die after S seconds")
    parser.add_argument(
        "--crash-once", action="store_true", help="with --crash-after: a continuation lives on"
    )
    parser.add_argument(
        "--suspend-at", type=float, metavar="S", help="write a suspended task's context at S s"
    )
    parser.add_argument("--suspend-task", default="1", metavar="ID", help="its task id")
    parser.add_argument(
        "--merge-at", type=float, metavar="S", help="commit on the agent branch, request a merge"
    )
    parser.add_argument(
        "--merge-file", default="src/{m}.py", help="the file committed ({m}: the module)"
    )
    parser.add_argument("--merge-via", choices=("signal", "queue"), default="signal")
    parser.add_argument(
        "--claude-ask-at", type=float, metavar="S", help="an AskUserQuestion call at S s"
    )
    parser.add_argument(
        "--claude-permission-at", type=float, metavar="S", help="a permission prompt at S s"
    )
    parser.add_argument(
        "--ready-at", type=float, metavar="S", help="commit its work at S s and wait for review"
    )
    parser.add_argument("--prompt", help="its first prompt (default: work on its module)")
    parser.add_argument("--module", help="what it works on (default: the key's last word)")
    parser.add_argument(
        "--attempt", type=int, metavar="N", help="an attempt of a task: ends as attempt N does"
    )
    parser.add_argument(
        "--attempt-at", type=float, metavar="S", help="with --attempt: commit its work at S s"
    )
    parser.add_argument("--seed", type=int, default=None)
    return parser
