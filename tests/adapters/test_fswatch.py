"""The directory watcher, on both of its backends (inotify read directly, and watchdog
where that is missing): every way a file changes is reported by its path, a directory
added later is watched, and stopping ends the thread at once. Real files, real kernel
events."""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from runeconsole.adapters.fswatch import (
    BACKENDS,
    LOCAL_FILE_SYSTEMS,
    DirWatcher,
    default_backend,
    file_system_type,
)
from runeconsole.core.files import atomic_write_bytes


class Seen:
    """The paths a watcher reported, waited for with a deadline."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self.threads: set[str] = set()
        self._changed = threading.Condition()

    def __call__(self, path: Path) -> None:
        with self._changed:
            self.paths.append(path)
            self.threads.add(threading.current_thread().name)
            self._changed.notify_all()

    def wait_for(self, path: Path, timeout: float = 5.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: path in self.paths, timeout)


@pytest.fixture(params=BACKENDS)
def watching(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[DirWatcher, Seen]]:
    seen = Seen()
    watcher = DirWatcher([tmp_path / "watched"], seen, backend=request.param)
    assert watcher.start(), watcher.unavailable
    try:
        yield watcher, seen
    finally:
        watcher.stop()


def test_linux_reads_inotify_itself() -> None:
    assert default_backend() == "inotify"


def test_a_file_replaced_whole_by_a_rename_is_reported_by_its_own_name(
    watching: tuple[DirWatcher, Seen], tmp_path: Path
) -> None:
    _, seen = watching
    target = tmp_path / "watched" / "worker-a.json"
    temp = tmp_path / "watched" / ".worker-a.json.tmp"
    temp.write_text("{}")
    os.replace(temp, target)
    assert seen.wait_for(target)


def test_a_file_written_in_place_appended_and_deleted_is_reported_each_time(
    watching: tuple[DirWatcher, Seen], tmp_path: Path
) -> None:
    _, seen = watching
    log = tmp_path / "watched" / "events.jsonl"
    log.write_text("one\n")
    assert seen.wait_for(log)
    seen.paths.clear()
    with log.open("a") as stream:  # held open: only its writes say so
        stream.write("two\n")
        stream.flush()
        assert seen.wait_for(log)
    seen.paths.clear()
    log.unlink()
    assert seen.wait_for(log)


def test_a_directory_that_appears_later_is_watched_once_added(
    watching: tuple[DirWatcher, Seen], tmp_path: Path
) -> None:
    watcher, seen = watching
    later = tmp_path / "later"
    later.mkdir()
    assert watcher.add(later)
    assert watcher.add(later)  # twice is once
    (later / "signal.json").write_text("{}")
    assert seen.wait_for(later / "signal.json")
    assert watcher.directories.count(later) == 1


def test_a_missing_directory_is_made_and_a_stopped_watcher_adds_nothing(tmp_path: Path) -> None:
    watcher = DirWatcher([tmp_path / "made" / "here"], Seen())
    assert watcher.start()
    assert (tmp_path / "made" / "here").is_dir()
    watcher.stop()
    assert not watcher.add(tmp_path)


def test_stopping_the_inotify_thread_takes_no_wait_and_leaves_it_ended(tmp_path: Path) -> None:
    watcher = DirWatcher([tmp_path], Seen(), backend="inotify")
    assert watcher.start()
    started = time.monotonic()
    watcher.stop()
    assert time.monotonic() - started < 0.5
    assert not any(t.name == "runeconsole-inotify" and t.is_alive() for t in threading.enumerate())


def test_the_inotify_thread_keeps_its_gap_so_a_stream_of_writes_comes_in_bursts(
    tmp_path: Path,
) -> None:
    seen = Seen()
    moments: list[float] = []
    watcher = DirWatcher(
        [tmp_path], lambda path: (moments.append(time.monotonic()), seen(path)), gap=0.05
    )
    assert watcher.start()
    try:
        for n in range(40):
            (tmp_path / f"f{n}").write_text("x")
            time.sleep(0.005)
        assert seen.wait_for(tmp_path / "f39")
    finally:
        watcher.stop()
    bursts = 1 + sum(1 for a, b in itertools.pairwise(moments) if b - a > 0.03)
    assert bursts <= 8  # 0.2 s of writes, read at most every 50 ms
    # Each path once a burst: a write's create and close are one path, unless a read fell
    # between them.
    assert len(set(seen.paths)) == 40 and len(seen.paths) < 40 + bursts


def test_a_callback_that_raises_does_not_end_the_watching(tmp_path: Path) -> None:
    seen = Seen()

    def fragile(path: Path) -> None:
        seen(path)
        if path.name == "bad":
            raise RuntimeError("the caller's own error")

    watcher = DirWatcher([tmp_path], fragile, backend="inotify")
    assert watcher.start()
    try:
        (tmp_path / "bad").write_text("x")
        assert seen.wait_for(tmp_path / "bad")
        (tmp_path / "good").write_text("x")
        assert seen.wait_for(tmp_path / "good")
    finally:
        watcher.stop()


def test_a_directory_that_cannot_be_watched_says_why_and_the_caller_falls_back_to_rescans(
    watching: tuple[DirWatcher, Seen], tmp_path: Path
) -> None:
    watcher, _ = watching
    assert not watcher.add(tmp_path / "never-made")
    assert watcher.unavailable is not None and "rescanning periodically" in watcher.unavailable
    assert watcher.running  # the others are still watched


def test_a_writers_temp_file_is_never_reported_only_the_name_it_is_renamed_to(
    watching: tuple[DirWatcher, Seen], tmp_path: Path
) -> None:
    _, seen = watching
    target = tmp_path / "watched" / "worker-a.json"
    atomic_write_bytes(target, b"{}")
    (tmp_path / "watched" / ".hidden").write_text("a dot file that is no writer's temp")
    assert seen.wait_for(tmp_path / "watched" / ".hidden")
    assert target in seen.paths
    assert all(not path.name.endswith(".tmp") for path in seen.paths)


def test_a_burst_of_writes_reaches_the_batch_callback_in_one_call_each_path_once(
    tmp_path: Path,
) -> None:
    batches: list[list[Path]] = []
    arrived = threading.Event()

    def batch(paths: Iterable[Path]) -> None:
        batches.append(list(paths))
        arrived.set()

    watcher = DirWatcher([tmp_path], batch=batch, gap=0.5, backend="inotify")
    assert watcher.start()
    try:
        (tmp_path / "first").write_text("x")  # read at once; the thread then waits 0.5 s
        assert arrived.wait(5)
        for n in range(20):
            atomic_write_bytes(tmp_path / f"f{n}.json", b"{}")
            (tmp_path / f"f{n}.json").write_text("in place")
        deadline = time.monotonic() + 5
        while len(written(batches)) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watcher.stop()
    assert set(written(batches)) == {tmp_path / f"f{n}.json" for n in range(20)}
    # Each call names a path once; a file written on both sides of a cut is in both calls.
    assert all(len(paths) == len(set(paths)) for paths in batches)
    # Written within the gap: one read (or two, cut by the gap), after the first's.
    assert sum(1 for paths in batches if any(p.name != "first" for p in paths)) <= 2


def written(batches: list[list[Path]]) -> list[Path]:
    """The paths of the batches, but the first file's (a read may have cut its events)."""
    return [path for paths in batches for path in paths if path.name != "first"]


MOUNTS = "\n".join(
    [
        "22 27 0:21 / /proc rw,relatime - proc proc rw",
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
        r"40 27 0:50 / /srv/shared\040root rw,relatime shared:7 - nfs4 host:/fleet rw",
        "41 40 0:51 / /srv/shared\\040root/local rw,relatime - tmpfs tmpfs rw",
    ]
)


def test_the_file_system_of_a_path_is_its_nearest_mounts_spaces_and_all() -> None:
    assert file_system_type(Path("/srv/shared root/.claude"), MOUNTS) == "nfs4"
    assert file_system_type(Path("/srv/shared root/local/x"), MOUNTS) == "tmpfs"
    assert file_system_type(Path("/srv/shared"), MOUNTS) == "ext4"  # not /srv/shared root
    assert file_system_type(Path("/proc/self"), MOUNTS) == "proc"


def test_inotify_on_a_local_directory_is_reliable_and_counts_the_events_it_lost(
    tmp_path: Path,
) -> None:
    if file_system_type(tmp_path) not in LOCAL_FILE_SYSTEMS:
        pytest.skip(f"{tmp_path} is on no local file system here")
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 50_000:
        pytest.skip("the kernel's queue is too long to overflow in a test")
    seen = Seen()
    watcher = DirWatcher([tmp_path], seen, gap=3.0, backend="inotify")
    assert watcher.start()
    try:
        assert watcher.reliable and watcher.lost_events == 0
        (tmp_path / "first").write_text("x")  # read at once; the thread then waits 3 s
        assert seen.wait_for(tmp_path / "first")
        (tmp_path / "second").write_text("x")
        for _ in range(limit):  # more events than the queue holds, meanwhile (two names
            os.utime(tmp_path / "first")  # in turn: the kernel merges an event repeated)
            os.utime(tmp_path / "second")
        deadline = time.monotonic() + 10
        while watcher.lost_events == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watcher.lost_events == 1
    finally:
        watcher.stop()
    assert not DirWatcher([tmp_path], seen, backend="watchdog").reliable  # not started


def test_a_watched_directory_made_again_is_no_longer_reliable_and_one_just_gone_still_is(
    tmp_path: Path,
) -> None:
    if file_system_type(tmp_path) not in LOCAL_FILE_SYSTEMS:
        pytest.skip(f"{tmp_path} is on no local file system here")
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    seen = Seen()
    watcher = DirWatcher([kept, gone], seen, backend="inotify")
    assert watcher.start()
    try:
        assert watcher.reliable
        gone.rmdir()  # the kernel drops its watch
        assert seen.wait_for(gone)
        assert watcher.reliable  # nothing there to miss
        gone.mkdir()  # made again: its entries are no event any more
        assert not watcher.reliable
    finally:
        watcher.stop()
    assert not watcher.reliable  # stopped: its thread reads nothing
