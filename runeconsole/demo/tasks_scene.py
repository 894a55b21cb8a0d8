"""A fixed scene of tasks and worktrees for the snapshot tests and the screenshots: no
Claude Code and no tmux,
every time from the manual clock, every size in whole kilobytes with room either side.

- ``fix-login-timeout``, working, three attempts: #1 committed work whose tests passed,
  #2 more work whose tests failed (the end of their output kept), #3 busy, nothing
  committed, two files of its own uncommitted;
- ``add-rate-limit``, picked: #2 in the merge queue, #1 removed;
- ``update-docs``, dropped: its one attempt kept for the file its agent left;
- a task file that cannot be read;
- a worktree Claude Code made itself, no agent's (an orphan).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.git import run_git
from runeconsole.core.timeutil import iso_z
from runeconsole.services.dispatch.task_store import TaskStore
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry

if TYPE_CHECKING:
    from runeconsole.services.identity_fields import IdentityChanges

TASK = "fix-login-timeout"
TEXT = (
    "Fix the login timeout: sessions expire after 30 s, not 30 min\n\n"
    "Make the timeout a setting (login.timeout_minutes), default 30."
)
# 8 KiB and 200 bytes: each worktree's size stays well inside its kilobyte, whatever the
# length of the path its .git file names.
LOGIN = "".join(f"def check_{n:03}(session):\n    return session.ok\n\n" for n in range(178))
README = "# shop\n\n" + "The shop's backend.\n" * ((8 * 1024 + 200 - len(LOGIN) - 8) // 20)
PASSED = b"".join(
    f"tests/test_{name}.py ....\n".encode() for name in ("login", "session", "config")
) + (b"\n12 passed in 4.08s\n")
FAILED = (
    b"tests/test_login.py ..F.\n\n"
    b"    def test_default_timeout():\n"
    b">       assert login.timeout() == 30 * 60\n"
    b"E       assert 30 == 1800\n\n"
    b"FAILED tests/test_login.py::test_default_timeout - assert 30 == 1800\n"
    b"1 failed, 11 passed in 4.31s\n"
)


def run(root: Path, *args: str) -> str:
    return run_git(list(args), root).stdout


def write(worktree: Path, files: dict[str, str]) -> None:
    for path, content in files.items():
        target = worktree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)


def commit(worktree: Path, files: dict[str, str], message: str) -> None:
    """What an agent does: edit, add, commit (in its own worktree)."""
    write(worktree, files)
    run(worktree, "add", "--", *files)
    run(worktree, "-c", "user.name=agent", "-c", "user.email=agent@x", "commit", "-qm", message)


def _worktree(root: Path, name: str) -> tuple[Path, str]:
    path = root.resolve() / ".claude" / "worktrees" / name
    branch = f"agent/worker-{name}"
    run(root, "worktree", "add", "--quiet", "-b", branch, str(path), "main")
    return path, branch


def _attempt(root: Path, n: int, name: str, state: str, at: str) -> dict[str, Any]:
    path = root / ".claude" / "worktrees" / name
    return {
        "n": n,
        "name": name,
        "agent": f"worker-{name}",
        "branch": f"agent/worker-{name}",
        "worktree": str(path.resolve()),
        "state": state,
        "placed": {},
        "started_at": at,
    }


def _task(
    task_id: str, text: str, state: str, at: str, attempts: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "text": text,
        "base": "main",
        "role": "worker",
        "mode": "tmux",
        "created_at": at,
        "created_by": "console",
        "state": state,
        "pick": None,
        "attempts": attempts,
    }


def _test(store: TaskStore, task: str, n: int, output: bytes, ok: bool, at: str) -> dict[str, Any]:
    log = store.keep_output(task, n, "test", output)
    said = "`pytest -q` passed in 4.1s" if ok else "`pytest -q` failed with exit 1 after 4.3s"
    return {
        "command": ["pytest", "-q"],
        "exit": 0 if ok else 1,
        "ok": ok,
        "seconds": 4.1 if ok else 4.3,
        "output": str(log),
        "message": said,
        "at": at,
    }


def _agent(
    registry: Registry, name: str, task: str, *, activity: str, usd: float, ended: bool = False
) -> None:
    path = registry.paths.root / ".claude" / "worktrees" / name
    registry.register(
        "worker",
        name,
        worktree=str(path.resolve()),
        tmux_session=f"rune-worker-{name}",
        metadata={"task_id": task},
    )
    day = registry.clock.now().date().isoformat()
    changes: IdentityChanges = {
        "activity": activity,
        "cost": {"usd": usd, "today_usd": usd, "day": day},
    }
    if ended:
        changes |= {"status": "terminated", "terminated_at": iso_z(registry.clock.now())}
    registry.update(f"worker-{name}", changes)


def build_tasks(root: Path, clock: ManualClock) -> None:
    git.init_repo(root)
    (root / ".git" / "info" / "exclude").write_text(".claude/\n")
    commit(root, {"src/login.py": LOGIN, "README.md": README}, "the shop")
    project = Project(root, clock)
    registry, store = Registry(project), TaskStore(project)

    # update-docs: dropped an hour ago; its attempt kept for its agent's file.
    at = iso_z(clock.now())
    path, _ = _worktree(root, "update-docs")
    write(path, {"docs/draft.md": "A draft.\n"})
    _agent(registry, "update-docs", "update-docs", activity="idle", usd=0.31, ended=True)
    docs = _attempt(root, 1, "update-docs", "kept", at)
    docs |= {"kept_because": "1 uncommitted or untracked file(s): docs/draft.md"}
    store.create("update-docs", _task("update-docs", "Update the docs", "dropped", at, [docs]))

    # add-rate-limit: #2 picked, in the merge queue; #1 removed.
    clock.advance(20 * 60)
    at = iso_z(clock.now())
    path, branch = _worktree(root, "add-rate-limit-2")
    commit(path, {"src/limits.py": "RATE = 5\n"}, "limits: 5 a second")
    _agent(registry, "add-rate-limit-2", "add-rate-limit", activity="idle", usd=2.47)
    entry, _ = MergeQueue(project).add(branch, identity="worker-add-rate-limit-2")
    first = _attempt(root, 1, "add-rate-limit-1", "removed", at)
    picked = _attempt(root, 2, "add-rate-limit-2", "picked", at)
    rate = _task("add-rate-limit", "Add a rate limit to the API", "picked", at, [first, picked])
    rate |= {"pick": 2, "queue_entry": entry.entry_id}
    store.create("add-rate-limit", rate)

    # fix-login-timeout: three attempts at work.
    clock.advance(30 * 60)
    at = iso_z(clock.now())
    attempts = [_attempt(root, n, f"{TASK}-{n}", "started", at) for n in (1, 2, 3)]
    store.create(TASK, _task(TASK, TEXT, "working", at, attempts))
    paths = [_worktree(root, f"{TASK}-{n}")[0] for n in (1, 2, 3)]
    login = LOGIN.replace("def check_000(session):", "TIMEOUT = 30 * 60\n\ndef check_000(session):")
    commit(paths[0], {"src/login.py": login, "tests/test_timeout.py": "def test(): ...\n"}, "fix")
    commit(paths[1], {"src/login.py": login.replace("    return session.ok\n", "", 9)}, "try")
    commit(paths[1], {"src/config.py": "TIMEOUT_MINUTES = 30\n"}, "config: the timeout")
    write(paths[2], {"src/login.py": login, "notes.md": "- ask about refresh\n"})
    for n, (activity, usd) in enumerate((("idle", 1.84), ("idle", 3.12), ("busy", 0.97)), 1):
        _agent(registry, f"{TASK}-{n}", TASK, activity=activity, usd=usd)
    clock.advance(12 * 60)
    at = iso_z(clock.now())
    store.update_attempt(TASK, 1, {"test": _test(store, TASK, 1, PASSED, True, at)})
    store.update_attempt(TASK, 2, {"test": _test(store, TASK, 2, FAILED, False, at)})

    (store.directory / "broken.json").write_text('{"task_id": "broken", "text": ')
    scratch = root.resolve() / ".claude" / "worktrees" / "scratch"
    run(root, "worktree", "add", "--quiet", "--detach", str(scratch))
    clock.advance(65)
