"""``runeconsole new --count 3`` starting the real Claude Code binary (pinned in
.ci/claude-code-version) three times, each in a fresh worktree on the console's tmux
server, against one Messages-API stand-in that answers each session from its own script
(routed by the working directory the request names): three attempts that edit differently
and commit, compared, tested, one picked and landed through the merge queue, the others'
worktrees and branches removed, a dirty one kept with its file named. Skipped, saying why,
where the binary is not installed."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.claude.session.view import agent_view
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from tests.support.claude_api import Turn, edit_turn, text_turn, tool_turn, write_turn
from tests.support.claude_binary import binary, new_project
from tests.support.claude_tasks import (
    RoutedApi,
    prepare_home,
    runeconsole,
    session_environment,
    user_prompt,
)
from tests.support.merge_queue import git, ignore_state, write_talisman
from tests.support.polling import wait_until
from tests.support.review import commit

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]

TASK = "Write greet(name) in greet.py so that test_greet.py passes"
TEST = 'from greet import greet\n\nassert greet("Ada") == "Hello, Ada!", greet("Ada")\n'
README = "# greetings\n\ngreet: to do\n"
PASSING = 'def greet(name):\n    return f"Hello, {name}!"\n'
FAILING = 'def greet(name):\n    return "hello " + name\n'
LARGER = (
    'DEFAULT = "world"\n\n\n'
    "def greet(name=DEFAULT):\n"
    '    """A greeting for ``name``."""\n'
    '    return f"Hello, {name}!"\n'
)
ALLOW = ["Bash(git add:*)", "Bash(git commit:*)"]


def commit_turn(number: int) -> Turn:
    command = f"git add -A && git commit -q -m 'greet: attempt {number}'"
    return tool_turn("Bash", {"command": command, "description": "Commit the attempt"})


def scripts(worktrees: list[Path]) -> dict[str, list[Turn]]:
    """Attempt 1 writes a passing greet.py, attempt 2 a failing one, attempt 3 a larger
    passing one and edits the README; each then commits through Bash."""
    one, two, three = worktrees
    return {
        str(one): [
            write_turn(str(one / "greet.py"), PASSING),
            commit_turn(1),
            text_turn("1 done."),
        ],
        str(two): [
            write_turn(str(two / "greet.py"), FAILING),
            commit_turn(2),
            text_turn("2 done."),
        ],
        str(three): [
            tool_turn("Read", {"file_path": str(three / "README.md")}),
            edit_turn(str(three / "README.md"), "greet: to do", "greet: done, with a default"),
            write_turn(str(three / "greet.py"), LARGER),
            commit_turn(3),
            text_turn("3 done."),
        ],
    }


def activity(root: Path, key: str) -> str | None:
    registry = Registry(Project(root))
    if not registry.path_for(key).exists():
        return None
    record = registry.get(key)
    return agent_view(record.fields, None).activity


def branches(root: Path) -> list[str]:
    return git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()


def worktrees(root: Path) -> list[str]:
    out = git(root, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


def test_new_count_3_compare_test_pick_land_and_clean(tmp_path: Path) -> None:
    claude, why = binary()
    assert claude is not None, why
    root, home = new_project(tmp_path)
    ignore_state(root)
    commit(
        root,
        {"test_greet.py": TEST, "README.md": README, ".gitignore": "__pycache__/\n"},
        "greetings: the test",
    )
    write_talisman(root, "python3 test_greet.py")
    prepare_home(home, root, ALLOW)
    places = [root / ".claude" / "worktrees" / f"greet-{n}" for n in (1, 2, 3)]
    keys = [f"worker-greet-{n}" for n in (1, 2, 3)]
    socket = f"rc-tasks-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    with RoutedApi(scripts(places), hold_first=True) as api:
        env = session_environment(home, api.url, claude, socket)
        try:
            assert runeconsole(root, env, "claude", "install").returncode == 0
            made = runeconsole(
                root, env, "new", "--task", TASK, "--count", "3", "--name", "greet",
                "--permission-mode", "acceptEdits", "--tmux-socket", socket, "--json",
            )  # fmt: skip
            assert made.returncode == 0, made.stderr
            task = json.loads(made.stdout)
            assert [a["state"] for a in task["attempts"]] == ["started"] * 3
            assert [a["worktree"] for a in task["attempts"]] == [str(p) for p in places]
            assert [a["branch"] for a in task["attempts"]] == [f"agent/{k}" for k in keys]

            # Three real sessions, each asking with the task, each busy while it waits.
            first = api.wait_for_each(1, timeout=60)
            for place in places:
                assert user_prompt(first[str(place)][0]) == TASK
            assert not api.unrouted
            for key in keys:
                wait_until(lambda key=key: activity(root, key) == "busy", 30, what=key)
            api.release()
            for key in keys:
                wait_until(lambda key=key: activity(root, key) == "idle", 60, what=key)
            for key, place in zip(keys, places, strict=True):  # its hooks ran there
                seen = Registry(Project(root)).get(key).get("claude")
                assert seen["cwd"] == str(place) and seen["session_id"], seen
            assert api.left() == {str(p): 0 for p in places}
            for number, key in enumerate(keys, 1):
                subject = git(root, "log", "-1", "--format=%s", f"agent/{key}")
                assert subject == f"greet: attempt {number}"

            compared = runeconsole(root, env, "task", "compare", "greet", "--json")
            assert compared.returncode == 0, compared.stderr
            views = json.loads(compared.stdout)
            assert [(v["added"], v["removed"], v["files"], v["commits"]) for v in views] == [
                (2, 0, ["greet.py"], 1),
                (2, 0, ["greet.py"], 1),
                (7, 1, ["README.md", "greet.py"], 1),
            ]
            assert [v["activity"] for v in views] == ["idle"] * 3

            tested = runeconsole(root, env, "task", "test", "greet", "--json")
            assert tested.returncode == 1  # not every attempt passed
            results = [a["test"] for a in json.loads(tested.stdout)]
            assert [r["ok"] for r in results] == [True, False, True], results
            assert "AssertionError: hello Ada" in Path(results[1]["output"]).read_text()

            # An operator's file in attempt 2's worktree, uncommitted: it keeps the worktree.
            (places[1] / "scratch.txt").write_text("notes\n")
            refused = runeconsole(root, env, "task", "pick", "greet", "1")
            assert refused.returncode == 1
            assert "commits on no other branch would be lost" in refused.stderr
            assert "worker-greet-2: 1 (" in refused.stderr
            assert "greet: attempt 2" in refused.stderr and "greet: attempt 3" in refused.stderr
            picked = runeconsole(root, env, "task", "pick", "greet", "1", "--discard-commits",
                                 "--json")  # fmt: skip
            assert picked.returncode == 0, picked.stderr
            ending = json.loads(picked.stdout)
            assert ending["approval"]["entry"]["branch"] == "agent/worker-greet-1"
            removals = {r["path"]: r for r in ending["removals"]}
            kept = removals[str(places[1])]
            assert (kept["removed"], kept["files"]) == (False, ["scratch.txt"])
            assert "scratch.txt" in kept["reason"]
            gone = removals[str(places[2])]
            assert gone["removed"] and gone["branch_deleted"]
            assert not places[2].exists() and "agent/worker-greet-3" not in branches(root)
            assert (places[1] / "scratch.txt").exists() and places[1].is_dir()

            landed = runeconsole(root, env, "merge-queue", "process", "--json")
            assert landed.returncode == 0, landed.stdout + landed.stderr
            assert (root / "greet.py").read_text() == PASSING
            assert not places[0].exists()
            assert "agent/worker-greet-1" not in branches(root)
            assert worktrees(root) == [str(root), str(places[1])]
            shown = json.loads(runeconsole(root, env, "task", "show", "greet", "--json").stdout)
            assert shown["state"] == "landed"
            assert [a["state"] for a in shown["attempts"]] == ["picked", "kept", "removed"]
            rows = json.loads(runeconsole(root, env, "worktrees", "--json").stdout)
            assert [(r["path"], r["state"], r["dirty"]) for r in rows] == [
                (str(root), "main", rows[0]["dirty"]),
                (str(places[1]), "dropped", ["scratch.txt"]),
            ]

            # The operator takes the file away: clean removes the worktree now, its commit
            # let go when the pick was confirmed (the head is still the one named then).
            (places[1] / "scratch.txt").unlink()
            cleaned = runeconsole(root, env, "worktrees", "clean", "--json")
            [left] = json.loads(cleaned.stdout)
            assert (left["path"], left["removed"]) == (str(places[1]), True), left
            assert [c.split(" ", 1)[1] for c in left["commits"]] == ["greet: attempt 2"]
        finally:
            api.release()
            Tmux(socket).kill_server()
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()
