"""The queue landing on a remote, with real git: a bare repository on disk as ``origin``,
the project a clone of it, and a teammate's clone pushing to ``main`` while the queue's
tests run. Nothing of anyone's work is lost; what lands is what was tested."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from runeconsole.core.config import Talisman
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue import (
    COMPLETED,
    CONFLICT,
    FAILED,
    PENDING,
    MergeQueueSettings,
    ProcessReport,
    Progress,
)
from tests.support.merge_batches import BATCHED, check_command, make_branches, runs
from tests.support.merge_queue import commit_on, git, make_queue, queue_file, rev
from tests.support.merge_remote import Team, lands_on_origin, make_team
from tests.support.polling import wait_until

pytestmark = pytest.mark.e2e

REMOTE = {"remote": "origin", "remote_retry_seconds": 0.1, "remote_retry_max_seconds": 0.4}

# Before the first test run that sees no marker: the teammate pushes to main (a file of
# their own), then the real check runs. The queue's push that follows is refused.
RACE = r"""
import os, subprocess, sys
marker, mate, branch = sys.argv[1:4]
if marker == "-" or not os.path.exists(marker):
    if marker != "-":
        open(marker, "w").close()
    def git(*args):
        subprocess.run(["git", *args], cwd=mate, check=True, capture_output=True)
    git("fetch", "--quiet", "origin", branch)
    git("checkout", "--quiet", "-B", branch, "FETCH_HEAD")
    with open(os.path.join(mate, f"mate-{os.getpid()}.txt"), "w") as out:
        out.write("the teammate's\n")
    git("add", ".")
    git("commit", "--quiet", "-m", "pushed during the run")
    git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}")
os.execv(sys.argv[4], sys.argv[4:])
"""


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return make_team(tmp_path / "team")


def race_command(
    tmp: Path, team: Team, branch: str = "main", *, every_run: bool = False
) -> list[str]:
    """The check, after which the teammate pushes to ``branch`` once (``every_run``: at
    every run)."""
    script = tmp / "race.py"
    script.write_text(RACE)
    marker = "-" if every_run else str(tmp / "raced")
    return [sys.executable, str(script), marker, str(team.mate), branch, *check_command(tmp, 0.2)]


def passes_the_check(team: Team, tmp: Path) -> bool:
    """The check, run on a fresh checkout of what the remote's ``main`` holds."""
    where, logs = tmp / "verify", tmp / "verify-logs"
    logs.mkdir()
    git(team.origin, "worktree", "add", "--quiet", "--detach", str(where), "main")
    try:
        check = check_command(logs)
        return subprocess.run(check, cwd=where, capture_output=True, timeout=60).returncode == 0
    finally:
        git(team.origin, "worktree", "remove", "--force", str(where))


def test_a_batch_lands_on_the_remote_as_a_fast_forward_and_the_local_main_follows(
    team: Team, clock, tmp_path: Path
) -> None:
    before = team.remote_main()
    make_branches(team.project, {"one": "good", "two": "good", "three": "good"})
    queue = make_queue(team.project, clock, check_command(tmp_path), **BATCHED, **REMOTE)
    for name in ("one", "two", "three"):
        queue.add(f"feat/{name}")

    report = queue.process(run_all=True)

    assert [o.status for o in report.outcomes] == [COMPLETED] * 3
    tip = team.remote_main()
    assert git(team.origin, "merge-base", "--is-ancestor", before, tip) == ""  # a fast-forward
    assert team.remote_subjects()[:3] == ["add three", "add two", "add one"]
    assert rev(team.project, "main") == tip  # the local main followed
    assert (team.project / "three.txt").exists()  # and its checkout
    assert rev(team.project, "origin/main") == tip
    assert len(runs(tmp_path)) == 1  # one batch, tested once, at the tip
    assert queue_file(team.project)["remote"].get("races", 0) == 0


def test_a_teammate_pushing_during_the_tests_is_rebased_on_retested_and_kept(
    team: Team, clock, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good", "two": "good"})
    command = race_command(tmp_path, team)
    queue = make_queue(team.project, clock, command, **BATCHED, **REMOTE)
    queue.add("feat/one")
    queue.add("feat/two")
    said: list[str] = []

    report = queue.process(run_all=True, progress=lambda event: said.append(event.message))

    assert [o.status for o in report.outcomes] == [COMPLETED, COMPLETED]
    subjects = team.remote_subjects()
    assert "pushed during the run" in subjects  # nothing of the teammate's is lost
    assert subjects.index("add two") < subjects.index("pushed during the run")
    assert len(runs(tmp_path)) == 2  # tested again on what the teammate pushed
    assert runs(tmp_path)[-1]["commit"] == team.remote_main()  # what landed was tested
    assert passes_the_check(team, tmp_path)
    assert rev(team.project, "main") == team.remote_main()
    assert queue_file(team.project)["remote"]["races"] == 1
    assert any("origin/main moved during the run" in line for line in said)
    assert any("round 2 of 3" in line for line in said)
    notes = queue_file(team.project)["entries"][0]["notes"]
    assert any("origin/main moved during the run" in note for note in notes)


def test_a_remote_that_keeps_moving_fails_the_batch_after_max_rebase_rounds(
    team: Team, clock, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good"})
    command = race_command(tmp_path, team, every_run=True)
    queue = make_queue(team.project, clock, command, max_rebase_rounds=2, **REMOTE)
    queue.add("feat/one")

    report = queue.process(run_all=True)

    (outcome,) = report.outcomes
    assert (outcome.status, outcome.reason) == (FAILED, "base_moved")
    assert "origin/main kept moving: gave up after 2 rebases" in str(outcome.error)
    assert "add one" not in team.remote_subjects()


def test_a_conflict_with_what_a_teammate_pushed_fails_only_that_entry(
    team: Team, clock, tmp_path: Path
) -> None:
    commit_on(team.project, "feat/clash", {"a.txt": "ours\n"}, message="add clash")
    make_branches(team.project, {"one": "good"})
    team.mate_pushes({"a.txt": "theirs\n"}, "the teammate edits a.txt")
    queue = make_queue(team.project, clock, check_command(tmp_path), **BATCHED, **REMOTE)
    queue.add("feat/clash")
    queue.add("feat/one")

    report = queue.process(run_all=True)

    outcomes = {o.branch: o for o in report.outcomes}
    assert (outcomes["feat/clash"].status, outcomes["feat/clash"].reason) == (FAILED, CONFLICT)
    assert outcomes["feat/clash"].conflict_files == ["a.txt"]
    assert outcomes["feat/one"].status == COMPLETED
    assert team.remote_subjects()[:2] == ["add one", "the teammate edits a.txt"]


def test_a_teammates_branch_on_the_remote_lands_and_stays_there_unless_configured(
    team: Team, clock, tmp_path: Path
) -> None:
    team.mate_branch("feature-x", {"x.txt": "x\n"})
    queue = make_queue(team.project, clock, check_command(tmp_path), **REMOTE)
    entry, _ = queue.add("origin/feature-x", pr_number=41)

    report = queue.process(run_all=True)

    assert (entry.get("remote"), entry.get("remote_branch"), entry.get("pr_number")) == (
        "origin",
        "feature-x",
        41,
    )
    assert [o.status for o in report.outcomes] == [COMPLETED]
    assert team.remote_subjects()[0] == "feature-x"
    assert "feature-x" in team.remote_branches()  # not ours to delete
    assert queue_file(team.project)["entries"][0]["pr_number"] == 41


def test_a_remote_branch_is_deleted_with_a_lease_when_delete_remote_branch_says_so(
    team: Team, clock, tmp_path: Path
) -> None:
    team.mate_branch("feature-x", {"x.txt": "x\n"})
    team.mate_branch("feature-y", {"y.txt": "y\n"})
    settings = {"delete_remote_branch": True, **REMOTE}
    queue = make_queue(team.project, clock, check_command(tmp_path), **settings)
    queue.add("origin/feature-x")
    assert [o.status for o in queue.process().outcomes] == [COMPLETED]
    assert "feature-x" not in team.remote_branches()  # landed and deleted

    # The teammate pushes more to feature-y while its tests run: what landed is not
    # what it holds now, so the lease keeps it.
    command = race_command(tmp_path, team, "feature-y")
    queue = make_queue(team.project, clock, command, **settings)
    queue.add("origin/feature-y")
    (outcome,) = queue.process().outcomes

    assert outcome.status == COMPLETED
    assert "feature-y" in team.remote_branches()
    assert "pushed during the run" not in team.remote_subjects()  # it was not tested
    assert any("origin/feature-y not deleted" in note for note in outcome.notes)


def test_a_branch_queued_with_push_is_pushed_and_deleted_on_the_remote_once_landed(
    team: Team, clock, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good"})
    queue = make_queue(team.project, clock, check_command(tmp_path), **REMOTE)
    entry, _ = queue.add("feat/one", push=True)
    assert "feat/one" in team.remote_branches()
    assert entry.get("pushed_by_us") is True

    report = queue.process(run_all=True)

    assert [o.status for o in report.outcomes] == [COMPLETED]
    assert "feat/one" not in team.remote_branches()
    notes = queue_file(team.project)["entries"][0]["notes"]
    assert "deleted origin/feat/one" in notes


def test_an_unreachable_remote_makes_the_entry_wait_and_it_lands_once_back(
    team: Team, clock, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good"})
    away = team.origin.with_name("origin-away.git")
    team.origin.rename(away)
    queue = make_queue(team.project, clock, check_command(tmp_path), **REMOTE)
    queue.add("feat/one")
    said: list[str] = []
    reports: list[ProcessReport] = []
    waited = threading.Event()

    def progress(event: Progress) -> None:
        said.append(event.message)
        if "trying again" in event.message:
            waited.set()

    worker = threading.Thread(
        target=lambda: reports.append(queue.process(run_all=True, progress=progress))
    )
    worker.start()
    assert waited.wait(30)
    wait_until(lambda: queue_file(team.project)["entries"][0].get("remote_wait"))
    entry = queue_file(team.project)["entries"][0]
    away.rename(team.origin)
    worker.join(60)

    assert not worker.is_alive()
    assert [o.status for o in reports[0].outcomes] == [COMPLETED]  # never failed for it
    assert entry["status"] == "in_progress"
    assert entry["current_step"] == "waiting for origin"
    assert "does not appear to be a git repository" in entry["remote_wait"]["reason"]
    assert any("origin is unreachable" in line for line in said)
    assert any("origin answers again" in line for line in said)
    assert queue_file(team.project)["entries"][0]["remote_wait"] is None
    assert team.remote_subjects()[0] == "add one"


def test_a_remote_gone_past_the_wait_puts_the_entries_back_pending_not_failed(
    team: Team, clock, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good", "two": "good"})
    shutil.rmtree(team.origin)
    queue = make_queue(
        team.project, clock, check_command(tmp_path), remote_wait_seconds=0.5, **REMOTE
    )
    queue.add("feat/one")
    queue.add("feat/two")

    report = queue.process(run_all=True)

    assert report.outcomes == []
    assert "origin is unreachable" in str(report.stopped)
    entries = queue_file(team.project)["entries"]
    assert [e["status"] for e in entries] == [PENDING, PENDING]
    assert "gave_up_at" in entries[0]["remote_wait"]
    assert queue_file(team.project)["remote"]["last_error"]


def test_a_remote_that_is_not_a_remote_of_the_project_is_refused_before_anything(
    team: Team, clock, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good"})
    queue = make_queue(team.project, clock, check_command(tmp_path), remote="upstream")
    queue.add("feat/one")
    with pytest.raises(Exception, match="'upstream', which is not a remote of"):
        queue.process()
    assert queue_file(team.project)["entries"][0]["status"] == PENDING


def test_a_remote_that_is_not_a_remote_name_is_reported_and_the_queue_stays_local(
    tmp_path: Path,
) -> None:
    (tmp_path / ".claude").mkdir()
    talisman_file = tmp_path / ".claude" / "talisman.yml"
    talisman_file.write_text("runeconsole:\n  merge_queue:\n    remote: '--upload-pack=x'\n")
    with pytest.raises(RuneError, match="'--upload-pack=x' is not a remote name"):
        MergeQueueSettings.from_talisman(Talisman.load(tmp_path))
    talisman = Talisman.load(tmp_path, strict=False)  # the console: said, and goes on
    assert MergeQueueSettings.from_talisman(talisman).remote is None
    assert any("is not a remote name" in problem for problem in talisman.problems)


def test_stats_say_where_main_is_here_and_on_the_remote(
    team: Team, clock, tmp_path: Path, run_cli
) -> None:
    lands_on_origin(team.project)
    team.mate_pushes({"m.txt": "m\n"})
    git(team.project, "commit", "--quiet", "--allow-empty", "-m", "local only")
    fetched = run_cli("merge-queue", "fetch", "--root", str(team.project))
    assert fetched.returncode == 0, fetched.stderr
    assert "local 1 ahead 1 behind" in fetched.stdout

    result = run_cli("merge-queue", "stats", "--json", "--root", str(team.project))

    remote = json.loads(result.stdout)["remote"]
    assert (remote["remote"], remote["branch"], remote["ahead"], remote["behind"]) == (
        "origin",
        "main",
        1,
        1,
    )
    assert remote["remote_tip"] == team.remote_main()
    assert remote["fetch_age_seconds"] is not None
    text = run_cli("merge-queue", "stats", "--root", str(team.project)).stdout
    assert "origin/main" in text and "local 1 ahead 1 behind" in text


def test_a_push_the_remote_declines_fails_the_batch_with_its_reason(
    team: Team, clock, tmp_path: Path
) -> None:
    hook = team.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'main is protected' >&2\nexit 1\n")
    hook.chmod(0o755)
    make_branches(team.project, {"one": "good"})
    queue = make_queue(team.project, clock, check_command(tmp_path), **REMOTE)
    queue.add("feat/one")

    (outcome,) = queue.process(run_all=True).outcomes

    assert (outcome.status, outcome.reason) == (FAILED, "git_error")
    assert "origin/main refused the push" in str(outcome.error)
    assert "add one" not in team.remote_subjects()


def test_the_cli_queues_a_teammates_remote_branch_with_its_pull_request(
    team: Team, run_cli
) -> None:
    team.mate_branch("feature-x", {"x.txt": "x\n"})
    git(team.project, "fetch", "--quiet")
    lands_on_origin(team.project)
    root = ["--root", str(team.project)]

    added = run_cli(
        "merge-queue", "add", "--branch", "origin/feature-x", "--pr", "7", "--json", *root
    )

    assert added.returncode == 0, added.stderr
    entry = json.loads(added.stdout)
    assert (entry["remote"], entry["remote_branch"], entry["pr_number"]) == (
        "origin",
        "feature-x",
        7,
    )
    listed = json.loads(run_cli("merge-queue", "list", "--json", "--no-predict", *root).stdout)
    assert listed["entries"][0]["pr_number"] == 7
    refused = run_cli("merge-queue", "add", "--branch", "origin/main", *root)
    assert refused.returncode == 2


def test_predictions_are_made_against_the_remotes_main_and_for_its_branches(
    team: Team, clock, tmp_path: Path
) -> None:
    commit_on(team.project, "feat/clash", {"a.txt": "ours\n"}, message="add clash")
    team.mate_pushes({"a.txt": "theirs\n"}, "the teammate edits a.txt")
    team.mate_branch("feature-x", {"x.txt": "x\n"})
    git(team.project, "fetch", "--quiet", "origin")
    queue = make_queue(team.project, clock, check_command(tmp_path), **REMOTE)
    clash, _ = queue.add("feat/clash")
    remote_entry, _ = queue.add("origin/feature-x")

    predicted = queue.predict()

    assert predicted[clash.entry_id].conflicts  # with what the teammate pushed
    assert predicted[clash.entry_id].files == ["a.txt"]
    assert predicted[remote_entry.entry_id].error is None
    assert not predicted[remote_entry.entry_id].conflicts


# The test command takes the remote away (as a host going down would) on its first run.
TAKE_AWAY = r"""
import os, sys
origin, away = sys.argv[1], sys.argv[2]
if os.path.exists(origin):
    os.rename(origin, away)
os.execv(sys.argv[3], sys.argv[3:])
"""


def test_a_remote_gone_during_the_tests_is_waited_for_and_the_push_lands_once_back(
    team: Team, clock, tmp_path: Path
) -> None:
    make_branches(team.project, {"one": "good"})
    away = team.origin.with_name("origin-away.git")
    script = tmp_path / "take_away.py"
    script.write_text(TAKE_AWAY)
    command = [sys.executable, str(script), str(team.origin), str(away), *check_command(tmp_path)]
    queue = make_queue(team.project, clock, command, **REMOTE)
    queue.add("feat/one")
    reports: list[ProcessReport] = []
    said: list[str] = []

    worker = threading.Thread(
        target=lambda: reports.append(
            queue.process(run_all=True, progress=lambda event: said.append(event.message))
        )
    )
    worker.start()
    wait_until(lambda: any("trying again" in line for line in said), timeout=30)
    wait_until(lambda: queue_file(team.project)["entries"][0].get("remote_wait"))
    waiting = queue_file(team.project)["entries"][0]
    away.rename(team.origin)
    worker.join(60)

    assert [o.status for o in reports[0].outcomes] == [COMPLETED]
    assert waiting["status"] == "in_progress" and waiting["current_step"] == "waiting for origin"
    assert len(runs(tmp_path)) == 1  # pushed once back, not tested again
    assert team.remote_subjects()[0] == "add one"
    assert rev(team.project, "main") == team.remote_main()


def test_fetch_says_when_the_remote_cannot_be_reached_and_stats_keep_the_error(
    team: Team, run_cli
) -> None:
    lands_on_origin(team.project)
    shutil.rmtree(team.origin)
    root = ["--root", str(team.project)]

    fetched = run_cli("merge-queue", "fetch", "--json", *root)

    assert fetched.returncode == 1
    assert "origin is unreachable" in json.loads(fetched.stdout)["error"]
    remote = json.loads(run_cli("merge-queue", "stats", "--json", *root).stdout)["remote"]
    assert "does not appear to be a git repository" in remote["last_error"]


def test_a_push_lost_inside_the_remotes_ref_update_is_a_race_not_a_failure(
    team: Team, clock, tmp_path: Path
) -> None:
    """A teammate's push landing between the remote reading ``main`` and updating it for
    ours: git says ``[remote rejected] (failed to update ref)``, not ``[rejected]``."""
    theirs = team.mate_branch("staging", {"mate.txt": "theirs\n"})
    hook = team.origin / "hooks" / "pre-receive"
    marker = tmp_path / "moved-once"
    hook.write_text(
        "#!/bin/sh\n"
        f"[ -e {marker} ] && exit 0\n"
        f"touch {marker}\n"
        "env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY "
        f"-u GIT_ALTERNATE_OBJECT_DIRECTORIES git update-ref refs/heads/main {theirs}\n"
    )
    hook.chmod(0o755)
    make_branches(team.project, {"one": "good"})
    queue = make_queue(team.project, clock, check_command(tmp_path), **REMOTE)
    queue.add("feat/one")

    (outcome,) = queue.process(run_all=True).outcomes

    assert outcome.status == COMPLETED
    assert team.remote_subjects()[:2] == ["add one", "staging"]
    assert queue_file(team.project)["remote"]["races"] == 1
    assert len(runs(tmp_path)) == 2  # tested again on what the teammate pushed
