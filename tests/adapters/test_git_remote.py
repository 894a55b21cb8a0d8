"""Git talking to a remote: never a prompt, rejections told from refusals and from a
remote that cannot be reached, real git against bare repositories on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.adapters import git_remote as gr
from tests.support.merge_queue import commit_on, git, rev
from tests.support.merge_remote import Team, make_team


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return make_team(tmp_path / "team")


def test_the_environment_switches_off_every_prompt_and_keeps_the_users_ssh_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GIT_ASKPASS", "/usr/bin/some-askpass")
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i /keys/deploy")
    env = gr.quiet_env(tmp_path)
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["SSH_ASKPASS_REQUIRE"] == "never"
    assert "GIT_ASKPASS" not in env
    assert env["GIT_SSH_COMMAND"] == f"ssh -i /keys/deploy {gr.SSH_OPTIONS}"
    assert "BatchMode=yes" in gr.SSH_OPTIONS


def test_a_repositorys_own_ssh_command_is_kept_with_batch_mode(team: Team) -> None:
    git(team.project, "config", "core.sshCommand", "ssh -F /etc/team_ssh")
    env = gr.quiet_env(team.project)
    assert env["GIT_SSH_COMMAND"] == f"ssh -F /etc/team_ssh {gr.SSH_OPTIONS}"


def test_a_remote_name_is_a_name_never_an_option_or_a_path() -> None:
    assert gr.valid_remote_name("origin") and gr.valid_remote_name("team-2.mirror")
    for bad in ("--upload-pack=x", "-o", "../x", "a/b", "", "a b", 3):
        assert not gr.valid_remote_name(bad)


def test_a_push_behind_the_remote_is_rejected_not_forced(team: Team) -> None:
    team.mate_pushes({"m.txt": "m\n"})
    ours = commit_on(team.project, "feat", {"f.txt": "f\n"}, base="main")
    result = gr.push(team.project, "origin", ours, "main", timeout=30)
    assert result.kind == gr.REJECTED
    assert "fetch first" in result.detail or "non-fast-forward" in result.detail
    assert team.remote_main() != ours


def test_a_push_the_remote_declines_is_refused_with_its_reason(team: Team) -> None:
    hook = team.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'main is protected' >&2\nexit 1\n")
    hook.chmod(0o755)
    ours = commit_on(team.project, "feat", {"f.txt": "f\n"}, base="main")
    result = gr.push(team.project, "origin", ours, "main", timeout=30)
    assert result.kind == gr.REFUSED
    assert "pre-receive hook declined" in result.detail


def test_a_fast_forward_push_lands_and_a_second_one_is_already_there(team: Team) -> None:
    ours = commit_on(team.project, "feat", {"f.txt": "f\n"}, base="main")
    assert gr.push(team.project, "origin", ours, "main", timeout=30).kind == gr.PUSHED
    assert gr.push(team.project, "origin", ours, "main", timeout=30).kind == gr.PUSHED
    assert team.remote_main() == ours


def test_a_remote_path_gone_is_unreachable_and_a_missing_branch_is_said_so(
    team: Team,
) -> None:
    with pytest.raises(gr.NoRemoteBranch):
        gr.fetch(team.project, "origin", ["no-such-branch"], timeout=30)
    team.origin.rename(team.origin.with_name("gone.git"))
    with pytest.raises(gr.RemoteUnreachable, match="origin is unreachable"):
        gr.fetch(team.project, "origin", ["main"], timeout=30)


def test_a_branch_is_deleted_only_while_it_holds_the_commit_leased(team: Team) -> None:
    first = team.mate_branch("feature", {"x.txt": "x\n"})
    commit_on(team.mate, "feature", {"y.txt": "y\n"}, base="feature")
    git(team.mate, "push", "--quiet", "origin", "feature")
    moved = gr.delete_branch(team.project, "origin", "feature", first, timeout=30)
    assert moved.kind == gr.REJECTED and "stale info" in moved.detail
    now = rev(team.origin, "feature")
    assert gr.delete_branch(team.project, "origin", "feature", now, timeout=30).kind == gr.PUSHED
    assert "feature" not in team.remote_branches()
