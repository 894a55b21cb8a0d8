"""A private ``sshd`` on 127.0.0.1 for the multi-host tests: a free port, a generated host
key and user key, its own config and ``authorized_keys``, and a client config (two host
aliases, ``alpha`` and ``beta``, and a ``known_hosts`` holding the host key) that the
fleet file's ``ssh`` prefix points at. It runs in the foreground (``-D -e``) and is
killed at the end; nothing of the user's ssh setup is read or touched."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import REPO

SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd")
HOSTS = ("alpha", "beta")


@dataclass
class Sshd:
    port: int
    home: Path
    ssh_prefix: list[str]
    process: subprocess.Popen[bytes]
    sockets: Path  # our ssh control sockets (a short path: a socket's is limited)

    def remote_command(self, *env: str) -> list[str]:
        """The remote runeconsole: this interpreter, with the test's environment named
        (sshd starts commands with a clean one)."""
        pythonpath = str(REPO)
        return ["env", f"PYTHONPATH={pythonpath}", *env, sys.executable, "-m", "runeconsole"]


def find_sshd() -> str | None:
    found = shutil.which("sshd")
    if found:
        return found
    return next((path for path in SSHD_CANDIDATES if os.access(path, os.X_OK)), None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rc-test", "-f", str(path)],
        check=True,
        timeout=30,
    )
    return path.with_suffix(".pub").read_text().strip()


def start_sshd(binary: str) -> Iterator[Sshd]:
    home = Path(tempfile.mkdtemp(prefix="rc-sshd-", dir="/tmp"))
    sockets = home / "s"
    sockets.mkdir(mode=0o700)
    user = getpass.getuser()
    host_key = keygen(home / "host_key")
    user_key = keygen(home / "user_key")
    (home / "authorized_keys").write_text(user_key + "\n")
    port = free_port()
    (home / "sshd_config").write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {home / 'host_key'}",
                f"PidFile {home / 'sshd.pid'}",
                f"AuthorizedKeysFile {home / 'authorized_keys'}",
                f"AllowUsers {user}",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                "MaxSessions 50",
                "MaxStartups 50",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    (home / "known_hosts").write_text(f"[127.0.0.1]:{port} {' '.join(host_key.split()[:2])}\n")
    client = [
        "Host alpha beta",
        "  HostName 127.0.0.1",
        f"  Port {port}",
        f"  User {user}",
        f"  IdentityFile {home / 'user_key'}",
        "  IdentitiesOnly yes",
        f"  UserKnownHostsFile {home / 'known_hosts'}",
        "  GlobalKnownHostsFile /dev/null",
        "  LogLevel ERROR",
        "",
    ]
    (home / "ssh_config").write_text("\n".join(client))
    if os.getuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
    process = subprocess.Popen(
        [binary, "-D", "-e", "-f", str(home / "sshd_config")],
        stdout=subprocess.DEVNULL,
        stderr=open(home / "sshd.log", "wb"),  # noqa: SIM115 - sshd holds it until killed
        start_new_session=True,  # its session processes too are ended with its group
    )
    try:
        wait_listening(port, process, home)
        yield Sshd(port, home, ["ssh", "-F", str(home / "ssh_config")], process, sockets)
    finally:
        control = ["ssh", "-F", str(home / "ssh_config"), "-o", f"ControlPath={sockets}/%C"]
        for host in HOSTS:  # masters still up would outlive the test run
            subprocess.run(
                [*control, "-O", "exit", host],
                capture_output=True,
                timeout=10,
                check=False,
            )
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the listener and its sessions
        process.wait(timeout=10)
        shutil.rmtree(home, ignore_errors=True)


def wait_listening(port: int, process: subprocess.Popen[bytes], home: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {(home / 'sshd.log').read_text()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise RuntimeError("sshd did not start listening within 20 s")


def remote_events_pids(root: Path) -> list[int]:
    """The ``events`` processes following ``root`` (found by their command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"events" in words and str(root).encode() in words and b"ssh" not in words[0]:
            found.append(int(entry))
    return found
