"""A small disk of its own for a test: a tmpfs mounted on a directory of the test's, filled
to the last byte on demand, freed again, or made read-only.

Mounting needs root (or ``CAP_SYS_ADMIN``); elsewhere the test is skipped and says why.
``.ci/run`` runs these tests as root, or under ``unshare --map-root-user --mount`` where it
is not root (a user namespace may mount a tmpfs of its own).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

CHUNKS = (1024 * 1024, 64 * 1024, 4096, 512, 1)
PAGE = 4096


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


class SmallDisk:
    def __init__(self, mountpoint: Path) -> None:
        self.mountpoint = mountpoint
        self.filler = mountpoint / ".filler"

    def fill(self, leave_pages: int = 0) -> None:
        """Write until the disk refuses: afterwards no file can grow by a byte (an empty
        file can still be made: a tmpfs counts pages, not inodes). ``leave_pages``: then
        free that many pages again, room for as many small files and no more."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in CHUNKS:
                block = b"\0" * size
                while True:
                    try:
                        os.write(fd, block)
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        break
        finally:
            os.close(fd)
        if leave_pages:
            os.truncate(self.filler, self.filler.stat().st_size - leave_pages * PAGE)

    def free(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.filler.unlink()

    def read_only(self) -> None:
        done = _run("mount", "-o", "remount,ro", str(self.mountpoint))
        assert done.returncode == 0, done.stderr

    def writable(self) -> None:
        done = _run("mount", "-o", "remount,rw", str(self.mountpoint))
        assert done.returncode == 0, done.stderr

    def temp_files(self) -> list[Path]:
        """Writers' temp files left anywhere on the disk (there must be none)."""
        return [p for p in self.mountpoint.rglob(".*.tmp") if p.is_file() and ".git" not in p.parts]


@contextlib.contextmanager
def small_disk(mountpoint: Path, size: str = "8m") -> Iterator[SmallDisk]:
    """A tmpfs of ``size`` on ``mountpoint`` for the block (skipped where mounting is not
    permitted); unmounted after, whatever the test left open on it."""
    if shutil.which("mount") is None:
        pytest.skip("no mount command here: the full-disk tests need one")
    mountpoint.mkdir(parents=True, exist_ok=True)
    done = _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(mountpoint))
    if done.returncode != 0:
        pytest.skip(
            f"mounting a tmpfs is not permitted here ({done.stderr.strip() or 'mount failed'}): "
            "run as root, or under `unshare --map-root-user --mount` as .ci/run does"
        )
    try:
        yield SmallDisk(mountpoint)
    finally:
        if _run("umount", str(mountpoint)).returncode != 0:
            _run("umount", "-l", str(mountpoint))  # a process of the test still has it open
