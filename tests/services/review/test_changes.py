"""An agent's changes against its base, worked out by real git in real worktrees."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runeconsole.adapters import git_diff
from runeconsole.core.errors import RuneError
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.service import NoWorktree
from tests.support.merge_queue import commit_in_checkout, git
from tests.support.review import agent_with_worktree, commit, reviews, write


def by_path(changes) -> dict:
    return {f.path: f for f in changes.files}


def test_commits_ahead_and_every_kind_of_uncommitted_work_are_listed(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "a")
    commit(wt, {"a.txt": "a\nmore\n", "new.py": "x = 1\n"}, "add new.py")
    commit(wt, {"b.txt": "b\nb2\nb3\n"}, "grow b")
    write(wt, {"c.txt": "c changed\n", "staged.txt": "s\n"})
    git(wt, "add", "staged.txt")
    write(wt, {"loose/untracked.md": "# hi\nthere\n"})
    changes = reviews(repo).changes(key)
    assert changes.error is None
    assert changes.branch == "feat-a" and changes.ahead == 2
    assert [c.subject for c in changes.commits] == ["grow b", "add new.py"]
    files = by_path(changes)
    assert set(files) == {"a.txt", "b.txt", "c.txt", "new.py", "staged.txt", "loose/untracked.md"}
    assert (files["a.txt"].added, files["a.txt"].removed) == (1, 0)
    assert (files["c.txt"].added, files["c.txt"].removed, files["c.txt"].where) == (
        1,
        1,
        ("unstaged",),
    )
    assert files["staged.txt"].where == ("staged",) and files["staged.txt"].status == "added"
    assert files["loose/untracked.md"].where == ("untracked",)
    assert files["loose/untracked.md"].added == 2
    assert files["new.py"].where == ("committed",)
    assert (changes.added, changes.removed) == (1 + 1 + 2 + 1 + 1 + 2, 1)
    assert changes.summary() == "+8 −1 · 6 files · 2 commits"


def test_renames_deletions_and_binary_files_are_said_as_such(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "b")
    git(wt, "mv", "a.txt", "renamed.txt")
    git(wt, "rm", "-q", "b.txt")
    write(wt, {"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary"})
    diff = reviews(repo).diff(key)
    files = by_path(diff.changes)
    assert files["renamed.txt"].status == "renamed"
    assert files["renamed.txt"].old_path == "a.txt"
    assert files["b.txt"].status == "deleted" and files["b.txt"].removed == 1
    assert files["logo.png"].binary and files["logo.png"].added is None
    assert diff.file("logo.png").notes == ["binary file: not shown as text"]
    assert diff.file("b.txt").lines == ["@@ -1 +0,0 @@", "-b"]


def test_a_ten_thousand_line_file_is_counted_and_numbered(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "c")
    body = "".join(f"line {n}\n" for n in range(1, 10_001))
    commit(wt, {"big.txt": body}, "a big file")
    write(wt, {"big.txt": body.replace("line 5000\n", "line five thousand\n")})
    diff = reviews(repo).diff(key)
    big = diff.file("big.txt")
    assert (big.change.added, big.change.removed) == (10_000, 0)
    assert big.change.where == ("committed", "unstaged")
    assert len(big.lines) == 10_001  # its hunk header and every line
    index = big.lines.index("+line five thousand")
    assert big.new[index] == 5000
    assert big.new[-1] == 10_000


def test_the_base_is_the_merge_base_with_main_or_the_ref_given(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "d")
    first = commit(wt, {"one.txt": "1\n"}, "one")
    commit(wt, {"two.txt": "2\n"}, "two")
    commit_in_checkout(repo, {"main-only.txt": "m\n"}, "main moves on")
    service = reviews(repo)
    changes = service.changes(key)
    assert changes.ahead == 2 and "main-only.txt" not in by_path(changes)
    since_first = service.changes(key, base=first)
    assert since_first.ahead == 1 and set(by_path(since_first)) == {"two.txt"}
    assert service.changes(
        key, base="no-such-ref"
    ).error == "no 'no-such-ref' to compare with in " + str(wt)


def test_a_worktree_deleted_under_the_console_says_it_is_gone(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "e")
    service = reviews(repo)
    assert service.changes(key).error is None
    shutil.rmtree(wt)
    assert service.changes(key).error == f"worktree {wt} is gone"
    assert service.changes(key, probe=False).error == f"worktree {wt} is gone"


def test_a_directory_that_is_not_a_repository_says_why(repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    Registry(Project(repo)).register("worker", "f", worktree=str(plain))
    changes = reviews(repo).changes("worker-f")
    assert changes.error is not None and "is not a git repository" in changes.error


def test_an_agent_without_a_worktree_has_nothing_to_review(repo: Path) -> None:
    Registry(Project(repo)).register("worker", "g")
    with pytest.raises(NoWorktree, match="no worktree"):
        reviews(repo).changes("worker-g")
    with pytest.raises(RuneError, match="no agent"):
        reviews(repo).changes("worker-nobody")


def test_a_session_in_the_project_root_shows_its_work_not_the_console_state(repo: Path) -> None:
    (repo / ".git" / "info" / "exclude").write_text("")  # a project that forgot to ignore it
    Registry(Project(repo)).register("claude", "root", worktree=str(repo))
    write(repo, {"a.txt": "a edited\n"})
    changes = reviews(repo).changes("claude-root")
    assert set(by_path(changes)) == {"a.txt"}
    assert changes.branch == "main" and changes.ahead == 0


def test_the_hook_file_or_the_session_cwd_says_where_an_agent_works(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "h", register=False)
    registry = Registry(Project(repo))
    registry.register("worker", "h")
    hook = repo / ".claude" / "state" / "hooks" / f"{key}.json"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(json.dumps({"worktree_path": str(wt)}))
    write(wt, {"z.txt": "z\n"})
    assert set(by_path(reviews(repo).changes(key))) == {"z.txt"}


@pytest.mark.e2e
def test_nothing_is_computed_again_until_something_moves(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "i")
    write(wt, {"a.txt": "a1\n"})
    service = reviews(repo)
    cache = service.cache
    service.changes(key)
    assert (cache.computed, cache.probed) == (1, 1)
    service.changes(key)  # a hook event: git status, nothing moved
    assert (cache.computed, cache.probed) == (1, 2)
    service.changes(key, probe=False)  # a heartbeat: stat only
    assert (cache.computed, cache.probed) == (1, 2)
    write(wt, {"a.txt": "a1\na2 longer\n"})  # the same file changed again
    assert by_path(service.changes(key, probe=False))["a.txt"].added == 2
    assert cache.computed == 2
    commit(wt, {"b.txt": "b2\n"}, "a commit moves HEAD")  # seen by stat alone
    assert service.changes(key, probe=False).ahead == 1
    assert cache.computed == 3


def test_a_clean_file_edited_is_seen_by_the_probe(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "j")
    service = reviews(repo)
    assert service.changes(key).files == ()
    write(wt, {"sub/deep.txt": "new\n"})
    (wt / "c.txt").write_text("c edited\n")
    assert set(by_path(service.changes(key))) == {"sub/deep.txt", "c.txt"}


def test_a_branch_without_a_worktree_shows_its_commits(repo: Path) -> None:
    _, wt = agent_with_worktree(repo, "k", register=False)
    commit(wt, {"k.txt": "k\n"}, "k work")
    diff = reviews(repo).branch_diff("feat-k")
    assert diff.changes.ahead == 1
    assert diff.file("k.txt").lines == ["@@ -0,0 +1 @@", "+k"]
    assert reviews(repo).branch_diff("gone").changes.error == "no branch 'gone'"


def test_more_commits_than_are_listed_are_counted_and_their_files_placed(repo: Path) -> None:
    talisman = repo / ".claude" / "talisman.yml"
    talisman.parent.mkdir(parents=True, exist_ok=True)
    talisman.write_text("runeconsole:\n  review:\n    max_commits: 2\n")
    key, wt = agent_with_worktree(repo, "m")
    for n in range(3):
        commit(wt, {f"f{n}.txt": f"{n}\n"}, f"commit {n}")
    changes = reviews(repo).changes(key)
    assert changes.ahead == 3 and [c.subject for c in changes.commits] == ["commit 2", "commit 1"]
    assert {f.path: f.where for f in changes.files} == {
        "f0.txt": ("committed",),
        "f1.txt": ("committed",),
        "f2.txt": ("committed",),
    }


def test_the_numbers_counted_in_the_patch_are_gits_own(repo: Path) -> None:
    """A review's diff counts each file's lines in its patch (one diff of every file, not
    two): the same numbers as ``--numstat``, for every kind of change."""
    _, wt = agent_with_worktree(repo, "n")
    long = "".join(f"line {n}\n" for n in range(40))
    commit(wt, {"long.txt": long, "tool.sh": "echo\n"}, "base files")
    git(wt, "mv", "c.txt", "moved.txt")  # c.txt is on main: a rename against the base
    write(wt, {"long.txt": long.replace("line 7\n", "seven\n"), "a.txt": "no newline"})
    write(wt, {"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary", "new/notes.md": "+1\n-2\n"})
    (wt / "tool.sh").chmod(0o755)
    (wt / "b.txt").unlink()  # on main: gone from the branch
    dirs = git_diff.repo_dirs(wt)
    base = git_diff.merge_base(dirs, "main", "HEAD") or ""
    untracked = ["logo.png", "new/notes.md"]
    counted, text = git_diff.changed_files_and_patch(dirs, base, untracked=untracked)
    assert counted == git_diff.changed_files(dirs, base, untracked=untracked)
    every = {"moved.txt", "long.txt", "a.txt", "logo.png", "tool.sh", "b.txt", "new/notes.md"}
    assert {c.path for c in counted} == every
    assert "rename from c.txt" in text and "Binary files" in text


def test_the_commits_ahead_are_read_again_only_when_the_head_or_the_base_moves(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, wt = agent_with_worktree(repo, "h")
    commit(wt, {"h.txt": "h\n"}, "one")
    write(wt, {"a.txt": "a1\n"})
    heads: list[str] = []
    reading = git_diff.commits

    def counted(*args: object, **kwargs: object) -> object:
        heads.append(str(args[2]))
        return reading(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git_diff, "commits", counted)
    service = reviews(repo)
    assert service.diff(key).changes.ahead == 1
    write(wt, {"a.txt": "a1\na2\n"})  # an edit: the same commits, no git log
    changes = service.diff(key).changes
    assert [c.subject for c in changes.commits] == ["one"] and changes.ahead == 1
    assert by_path(changes)["a.txt"].added == 2 and by_path(changes)["h.txt"].where == (
        "committed",
    )
    assert len(heads) == 1
    commit(wt, {"h.txt": "h2\n"}, "two")  # the head moved: read again
    assert [c.subject for c in service.diff(key).changes.commits] == ["two", "one"]
    assert len(heads) == 2
