"""The demo's stand-in for Claude Code, as ``runeconsole new`` starts it: ``PROGRAM [--model M]
[--permission-mode P] "TASK"`` in the attempt's worktree, in tmux, with the environment the
spawn gives every agent (``RUNECONSOLE_ROOT``, ``RUNECONSOLE_AGENT_KEY``). It finds its
attempt in the task's file and runs a fake agent (``fake_agent``) that works on the task,
then commits what that attempt commits (``attempt_work``) and stops.

The demo's talisman names it as Claude Code (``runeconsole.background.command``), through the
script ``make_project`` writes (``write_program``), so ``n`` in the demo's console starts one
too. Claude Code's other commands answer as a Claude Code with no background sessions would:
``agents`` lists none, ``--bg`` is refused (the demo's agents run in tmux).

    demo-claude "Give the sync client a retry limit"
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from runeconsole.core.files import atomic_write_bytes
from runeconsole.demo import attempt_work, fake_agent
from runeconsole.services.claude.bridge.locate import AGENT_KEY_ENV, ROOT_ENV
from runeconsole.services.dispatch.task_store import TaskStore
from runeconsole.services.project import Project

PROGRAM = "tmp/demo-claude"  # under the demo project's root (tmp/ is not committed)
VERSION = "2.1.328 (runeconsole demo: scripted)"
WITH_VALUE = ("--model", "--permission-mode")


def write_program(root: Path) -> Path:
    """The executable script that runs this module with this Python; its path."""
    path = root / PROGRAM
    script = (
        "#!/bin/sh\n"
        "# The runeconsole demo's scripted stand-in for Claude Code.\n"
        f'exec {shlex.quote(sys.executable)} -m runeconsole.demo.fake_claude "$@"\n'
    )
    atomic_write_bytes(path, script.encode(), mode=0o755)
    return path


def prompt_of(args: list[str]) -> str:
    """The prompt: what follows the options ``new`` gives."""
    rest = list(args)
    while rest and rest[0] in WITH_VALUE:
        rest = rest[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    return " ".join(rest).strip()


def find_attempt(root: Path, key: str) -> tuple[int, str | None]:
    """``(attempt number, task id)`` of the agent ``key`` (newest task first); ``(1, None)``
    for an agent no task names."""
    for task in TaskStore(Project(root, strict=False)).list():
        for attempt in task.attempts:
            if attempt.agent == key:
                return attempt.number, task.task_id
    return 1, None


def agent_options(root: Path, key: str, prompt: str) -> list[str]:
    number, task_id = find_attempt(root, key)
    module = attempt_work.module_name(task_id or key.split("-", 1)[-1])
    return [
        "--key",
        key,
        "--root",
        str(root),
        "--prompt",
        prompt or f"Work on the {module} module.",
        "--module",
        module,
        "--attempt",
        str(number),
        "--attempt-at",
        str(attempt_work.finish_at(number)),
        "--seed",
        str(number),
    ]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        print(VERSION)
        return 0
    if args[:1] == ["agents"]:  # the console asks which background sessions run: none
        print("[]")
        return 0
    if args[:1] in (["--bg"], ["logs"], ["stop"], ["attach"]):
        print(
            "demo-claude: the demo's scripted agents run in tmux only; start them without "
            "--background",
            file=sys.stderr,
        )
        return 1
    key, root = os.environ.get(AGENT_KEY_ENV), os.environ.get(ROOT_ENV)
    if not key or not root:
        print(
            "demo-claude: a demo agent; start it with `runeconsole new` (or spawn) in the demo",
            file=sys.stderr,
        )
        return 2
    return fake_agent.main(agent_options(Path(root), key, prompt_of(args)))


if __name__ == "__main__":
    raise SystemExit(main())
