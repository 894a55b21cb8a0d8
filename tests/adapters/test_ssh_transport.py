"""The SSH transport: our sharing options on the fleet file's prefix, host keys checked,
and the remote argv quoted for the remote shell exactly once (against a real sshd)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from runeconsole.adapters.ssh import SshTransport, failure_reason, private_dir, remote_command
from runeconsole.core.errors import RuneError
from tests.support.sshd import Sshd

HOSTILE = [
    "two words",
    "it's",
    'say "hi"',
    "$HOME",
    "${PATH}",
    "`id`",
    "$(id)",
    "a;b",
    "x|y",
    "*",
    "~",
    "-n",
    "back\\slash",
    "tab\there",
    "",
]


def test_the_argv_is_the_prefix_our_sharing_options_then_the_host_and_one_quoted_string(
    tmp_path: Path,
) -> None:
    ssh = SshTransport("build1", ["ssh", "-F", "/etc/cfg"], sockets=tmp_path, persist=30)
    argv = ssh.argv(["runeconsole", "events", "--root", "/srv/my project"])
    assert argv[:3] == ["ssh", "-F", "/etc/cfg"]
    options = dict(zip(argv[3:-4:2], argv[4:-4:2], strict=True))
    assert set(options) == {"-o"}
    given = argv[4:-4:2]
    assert "ControlMaster=auto" in given and "BatchMode=yes" in given
    assert f"ControlPath={tmp_path}/%C" in given and "ControlPersist=30" in given
    assert not any("StrictHostKeyChecking" in word for word in argv)
    assert argv[-4:] == ["-T", "--", "build1", "runeconsole events --root '/srv/my project'"]
    assert ssh.argv(["tmux"], tty=True)[-4] == "-t"


def test_a_host_that_would_be_read_as_an_option_is_refused() -> None:
    with pytest.raises(RuneError, match="read as an option"):
        SshTransport("-oProxyCommand=touch /tmp/x")


def test_the_remote_string_splits_back_into_exactly_the_words() -> None:
    assert shlex.split(remote_command(HOSTILE)) == HOSTILE


def test_control_sockets_live_only_in_a_directory_no_one_else_can_enter(tmp_path: Path) -> None:
    mine = private_dir(tmp_path / "sockets")
    assert mine.stat().st_mode & 0o777 == 0o700
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    os.chmod(open_dir, 0o755)
    with pytest.raises(RuneError, match="open to other users"):
        private_dir(open_dir)


def test_why_a_remote_command_failed_in_one_line() -> None:
    assert failure_reason(255, "ssh: connect to host h port 22: Connection refused\n", "h") == (
        "ssh to h failed: ssh: connect to host h port 22: Connection refused"
    )
    assert "not installed on h" in failure_reason(127, "bash: runeconsole: command not found", "h")
    assert failure_reason(2, "runeconsole: no such question\n", "h") == "no such question"


# -- against a real sshd -------------------------------------------------------------------


def transport(sshd: Sshd, host: str = "alpha", prefix: list[str] | None = None) -> SshTransport:
    return SshTransport(host, prefix or sshd.ssh_prefix, sockets=sshd.sockets, persist=5)


def test_words_with_spaces_quotes_and_dollars_arrive_as_they_were_sent(sshd: Sshd) -> None:
    done = transport(sshd).run(["printf", "%s\\n", *HOSTILE])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:-1] == HOSTILE


def test_commands_to_a_host_share_one_master_connection_until_it_is_closed(sshd: Sshd) -> None:
    ssh = transport(sshd, "beta")
    assert ssh.run(["true"]).returncode == 0
    assert ssh.control("check")  # the master stays up (ControlPersist) for the next command
    assert ssh.run(["true"]).returncode == 0
    ssh.close()
    assert not ssh.control("check")


def test_an_unknown_host_key_is_refused_not_accepted(sshd: Sshd, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    prefix = [*sshd.ssh_prefix, "-o", f"UserKnownHostsFile={empty}"]
    done = transport(sshd, "alpha", prefix).run(["true"])
    assert done.returncode == 255
    assert "Host key verification failed" in failure_reason(done.returncode, done.stderr, "alpha")


def test_a_host_that_refuses_the_connection_says_so(sshd: Sshd) -> None:
    prefix = [*sshd.ssh_prefix, "-p", "1"]  # the command line's port wins over the config's
    done = transport(sshd, "alpha", prefix).run(["true"])
    assert "Connection refused" in failure_reason(done.returncode, done.stderr, "alpha")


def test_a_missing_remote_command_is_named(sshd: Sshd) -> None:
    done = transport(sshd).run(["no-such-runeconsole-here", "events"])
    assert "not installed on alpha" in failure_reason(done.returncode, done.stderr, "alpha")
