"""The demo's task and how its attempts end: the same task, three ends. Each attempt works
for a while, then commits its work in its worktree and stops (Claude Code's Stop): attempt 1
writes the module and its tests, which pass; attempt 2 gets the first wait wrong, and one of
its tests fails; attempt 3 does more (a policy with a cap, a client retried by it, more
tests, a page of docs), and its tests pass. An attempt past the third ends as attempt
``(n - 1) % 3 + 1`` does, so a task the operator starts in the demo (``n``) ends the same way.

The files are named after the task (``retry-limit``: ``src/retry_limit.py``), so two tasks do
not write the same file; the demo's test command (``runeconsole.demo.checks``) runs them.
"""

from __future__ import annotations

import re
from pathlib import Path

from runeconsole.core.errors import RuneError
from runeconsole.demo.merge_queue import commit_files

TASK_NAME = "retry-limit"
TASK_TEXT = (
    "Give the sync client a retry limit: at most 5 tries, each wait twice as long as the "
    "one before. Add tests."
)
PASSES, FAILS, MORE = "passes", "fails", "more"
OUTCOMES = (PASSES, FAILS, MORE)
FINISH_AT = (16.0, 20.0, 26.0)  # seconds after its start each outcome commits and stops

BASE_TEST = (  # on main from the start, so every run of the test command has a test
    "def test_the_readme_names_the_project():\n"
    "    with open('README.md', encoding='utf-8') as readme:\n"
    "        assert readme.read().startswith('# demo project')\n"
)


def outcome(number: int) -> str:
    return OUTCOMES[(max(number, 1) - 1) % len(OUTCOMES)]


def finish_at(number: int) -> float:
    """When attempt ``number`` commits and stops, in seconds after its start."""
    rounds = (max(number, 1) - 1) // len(OUTCOMES)
    return FINISH_AT[OUTCOMES.index(outcome(number))] + 4.0 * rounds


def module_name(task_id: str) -> str:
    """The Python module a task's work goes in: ``retry-limit`` -> ``retry_limit``."""
    name = re.sub(r"\W", "_", task_id.lower()).strip("_") or "task"
    return name if name[0].isalpha() else f"task_{name}"


def _code(module: str, first: str) -> str:
    return (
        '"""How the sync client retries: at most MAX_TRIES tries, each wait twice the one '
        'before."""\n'
        "\n"
        "MAX_TRIES = 5\n"
        "\n"
        "\n"
        "def delays(first: float, tries: int = MAX_TRIES) -> list[float]:\n"
        '    """The waits between ``tries`` tries: ``first``, then each twice the one before."""\n'
        f"    return [first * 2**n for n in {first}]\n"
    )


def _tests(module: str) -> str:
    return (
        f"from src.{module} import MAX_TRIES, delays\n"
        "\n"
        "\n"
        "def test_a_wait_between_each_two_tries():\n"
        "    assert delays(0.5, 4) == [0.5, 1.0, 2.0]\n"
        "\n"
        "\n"
        "def test_at_most_max_tries():\n"
        "    assert len(delays(1.0)) == MAX_TRIES - 1\n"
    )


def _policy(module: str) -> str:
    return (
        '"""How the sync client retries: a policy of at most ``max_tries`` tries, each wait\n'
        'twice the one before and none longer than ``cap`` seconds."""\n'
        "\n"
        "from dataclasses import dataclass\n"
        "\n"
        "MAX_TRIES = 5\n"
        "\n"
        "\n"
        "@dataclass(frozen=True)\n"
        "class RetryPolicy:\n"
        "    max_tries: int = MAX_TRIES\n"
        "    first: float = 0.5\n"
        "    cap: float = 30.0\n"
        "\n"
        "    def delays(self) -> list[float]:\n"
        '        """The waits between the tries: each twice the one before, at most cap."""\n'
        "        return [min(self.cap, self.first * 2**n) for n in range(self.max_tries - 1)]\n"
        "\n"
        "    def gives_up_after(self, tries: int) -> bool:\n"
        "        return tries >= self.max_tries\n"
        "\n"
        "\n"
        "def delays(first: float, tries: int = MAX_TRIES) -> list[float]:\n"
        '    """The waits between ``tries`` tries, uncapped."""\n'
        "    return RetryPolicy(tries, first, cap=float('inf')).delays()\n"
    )


def _client(module: str) -> str:
    return (
        '"""The sync client\'s calls, retried by the policy."""\n'
        "\n"
        "import time\n"
        "from collections.abc import Callable\n"
        "from typing import TypeVar\n"
        "\n"
        f"from src.{module} import RetryPolicy\n"
        "\n"
        "T = TypeVar('T')\n"
        "\n"
        "\n"
        "def with_retries(\n"
        "    call: Callable[[], T],\n"
        "    policy: RetryPolicy | None = None,\n"
        "    sleep: Callable[[float], None] = time.sleep,\n"
        ") -> T:\n"
        '    """``call`` until it returns, waiting between tries; its last error once the\n'
        '    policy gives up."""\n'
        "    policy = policy or RetryPolicy()\n"
        "    waits = policy.delays()\n"
        "    tries = 1\n"
        "    while True:\n"
        "        try:\n"
        "            return call()\n"
        "        except ConnectionError:\n"
        "            if policy.gives_up_after(tries):\n"
        "                raise\n"
        "            sleep(waits[tries - 1])\n"
        "            tries += 1\n"
    )


def _more_tests(module: str) -> str:
    return (
        _tests(module).replace(
            f"from src.{module} import MAX_TRIES, delays\n",
            f"from src.{module} import MAX_TRIES, RetryPolicy, delays\n"
            f"from src.{module}_client import with_retries\n",
        )
        + "\n"
        "\n"
        "def test_no_wait_is_longer_than_the_cap():\n"
        "    assert RetryPolicy(8, 1.0, cap=10.0).delays()[-3:] == [10.0, 10.0, 10.0]\n"
        "\n"
        "\n"
        "def test_the_client_retries_until_the_call_returns():\n"
        "    calls, waits = [], []\n"
        "\n"
        "    def flaky():\n"
        "        calls.append(1)\n"
        "        if len(calls) < 3:\n"
        "            raise ConnectionError('refused')\n"
        "        return 'synced'\n"
        "\n"
        "    assert with_retries(flaky, sleep=waits.append) == 'synced'\n"
        "    assert waits == [0.5, 1.0]\n"
        "\n"
        "\n"
        "def test_the_client_gives_up_after_max_tries():\n"
        "    waits = []\n"
        "\n"
        "    def down():\n"
        "        raise ConnectionError('refused')\n"
        "\n"
        "    try:\n"
        "        with_retries(down, RetryPolicy(3), sleep=waits.append)\n"
        "    except ConnectionError:\n"
        "        assert waits == [0.5, 1.0]\n"
        "    else:\n"
        "        raise AssertionError('it never gave up')\n"
    )


def _docs(module: str) -> str:
    return (
        "# Retries\n"
        "\n"
        "The sync client tries a call at most 5 times. Between two tries it waits, each wait\n"
        "twice the one before (0.5 s, 1 s, 2 s, 4 s), none longer than 30 s. Give\n"
        f"`with_retries` a `RetryPolicy` of your own (`src/{module}.py`) for another limit.\n"
    )


def files(number: int, module: str) -> dict[str, str]:
    """What attempt ``number`` commits."""
    code, tests = f"src/{module}.py", f"tests/test_{module}.py"
    kind = outcome(number)
    if kind == PASSES:
        return {code: _code(module, "range(tries - 1)"), tests: _tests(module)}
    if kind == FAILS:  # the first wait is already doubled
        return {code: _code(module, "range(1, tries)"), tests: _tests(module)}
    return {
        code: _policy(module),
        f"src/{module}_client.py": _client(module),
        tests: _more_tests(module),
        f"docs/{module}.md": _docs(module),
    }


def message(number: int, module: str) -> str:
    kind = outcome(number)
    if kind == PASSES:
        return f"{module}: at most 5 tries, each wait twice the one before"
    if kind == FAILS:
        return f"{module}: retry up to 5 times with doubling waits"
    return f"{module}: a retry policy (limit, doubling waits, a cap), the client retried by it"


def deliver(worktree: Path | None, number: int, module: str) -> list[str]:
    """Commit attempt ``number``'s work in its worktree; the lines its screen shows."""
    if worktree is None:
        return ["⏺ Could not commit: no worktree of its own"]
    written = files(number, module)
    try:
        commit_files(worktree, written, message(number, module))
    except RuneError as exc:
        return [f"⏺ Could not commit: {exc.message}"]
    said = [f"⏺ Write({name})" for name in written]
    if outcome(number) != FAILS:  # the failing attempt did not run its tests
        said += ["⏺ Bash(python -m runeconsole.demo.checks)", "  ⎿  tests passed"]
    added = sum(text.count("\n") for text in written.values())
    said += [
        f'⏺ Bash(git commit -m "{message(number, module)}")',
        f"  ⎿  {len(written)} files changed, {added} insertions(+)",
        "⏺ Done. The work is committed on this branch.",
    ]
    return said
