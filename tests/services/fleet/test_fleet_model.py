"""The fleet model: fed by file events, a stat-compared rescan, deadlines and the monitor,
each change reported by key, at the cost of what changed; while inotify tells of every
change, a paced rescan trusts it between its full passes."""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime, time, timedelta
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.files import atomic_write_json
from runeconsole.services import registry as registry_module
from runeconsole.services.cost.ledger import local_day
from runeconsole.services.fleet import FleetModel
from runeconsole.services.fleet import index as index_module
from runeconsole.services.fleet import model as model_module
from runeconsole.services.fleet.index import trusted
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.project import Project
from runeconsole.services.registry import LivenessSettings, Registry
from runeconsole.services.supervision.problems import judge_with
from runeconsole.services.supervision.settings import SupervisorSettings

OLD = 10**9  # an mtime far enough back for the stat index to trust it


def model_of(project: Path, clock: ManualClock) -> tuple[FleetModel, Registry]:
    registry = Registry(Project(project, clock), LivenessSettings(60, 300))
    hooks = HookFiles(Project(project, clock))
    model = FleetModel(registry, hooks, supervised=lambda r: bool(r.get("tmux_session")))
    return model, registry


def workers(registry: Registry, *names: str) -> None:
    """Register a worker of each name (``worker-NAME``)."""
    for name in names:
        registry.register("worker", name)


def age_files(directory: Path) -> None:
    """Back-date every file so its stat is trusted (a just-written one is read again)."""
    for path in directory.glob("*.json"):
        os.utime(path, ns=(OLD, OLD))


@pytest.fixture
def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = registry_module.read_bytes_and_stat

    def counting(path: object, **options: object) -> object:
        reads.append(os.path.basename(os.fspath(path)))  # type: ignore[arg-type]
        return real(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(registry_module, "read_bytes_and_stat", counting)
    return reads


def test_a_silent_agent_turns_yellow_then_red_on_its_deadlines_alone(
    project: Path, clock: ManualClock
) -> None:
    model, registry = model_of(project, clock)
    registry.register("worker", "quiet")
    registry.register("worker", "chatty")
    model.load()
    assert model.counts()["green"] == 2
    clock.advance(60)
    assert not model.tick(clock.now())  # nothing due yet: nothing rejudged, nothing changed
    clock.advance(60)  # 120 s: past the green threshold (2 x 60 s)
    change = model.tick(clock.now())
    assert change.changed == {"worker-quiet", "worker-chatty"} and change.counts
    assert model.get("worker-quiet").liveness == "yellow"
    clock.advance(180)  # 300 s: stale
    model.tick(clock.now())
    assert model.counts() == {"red": 2, "yellow": 0, "green": 0, "grey": 0}
    clock.advance(10**6)
    assert not model.tick(clock.now())  # red until a new file says otherwise: nothing due


def test_a_heartbeat_moves_the_deadline_and_an_old_deadline_is_ignored(
    project: Path, clock: ManualClock
) -> None:
    model, registry = model_of(project, clock)
    registry.register("worker", "a")
    model.load()
    clock.advance(100)
    registry.heartbeat("worker-a")
    model.apply_paths([registry.path_for("worker-a")])
    clock.advance(30)  # 130 s after the first beat, 30 s after the second
    assert not model.tick(clock.now())
    assert model.get("worker-a").liveness == "green"


def test_the_rescan_reads_only_files_whose_stat_moved(
    project: Path, clock: ManualClock, counted_reads: list[str]
) -> None:
    model, registry = model_of(project, clock)
    workers(registry, "a", "b", "c")
    age_files(registry.paths.identities)
    model.load()
    counted_reads.clear()
    assert not model.rescan()
    assert counted_reads == []
    registry.update("worker-b", {"node_id": "n7"})  # written behind the model's back
    (registry.paths.identities / "worker-c.json").unlink()
    counted_reads.clear()
    change = model.rescan()
    assert change.changed == {"worker-b"} and change.removed == {"worker-c"}
    assert counted_reads == ["worker-b.json"]
    assert model.get("worker-b").get("node_id") == "n7"
    assert model.counts()["green"] == 2


def test_a_first_load_stats_no_file_and_keeps_the_stamp_of_each_file_it_read(
    project: Path, clock: ManualClock, counted_reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, registry = model_of(project, clock)
    workers(registry, "a", "b", "c")
    age_files(registry.paths.identities)
    listed_stats: list[object] = []  # of files: a directory's own stamp is taken too
    real_stamp = index_module.stamp_of

    def stamp_of(info: os.stat_result) -> object:
        if stat.S_ISREG(info.st_mode):
            listed_stats.append(info)
        return real_stamp(info)

    monkeypatch.setattr(index_module, "stamp_of", stamp_of)
    lstats: list[str] = []
    real_lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: lstats.append(path) or real_lstat(path))
    counted_reads.clear()  # registering read them
    model.load()
    assert (listed_stats, lstats) == ([], [])  # each stamp came from the file as it was read
    assert sorted(counted_reads) == ["worker-a.json", "worker-b.json", "worker-c.json"]
    counted_reads.clear()
    assert not model.rescan()  # those stamps are the files' own: nothing is read again
    assert counted_reads == [] and len(listed_stats) == 3


def test_a_rescan_read_older_than_an_event_is_not_applied(
    project: Path, clock: ManualClock
) -> None:
    model, registry = model_of(project, clock)
    registry.register("worker", "a")
    model.load()
    registry.update("worker-a", {"node_id": "old"})
    scan = model.scan()  # the worker reads "old" ...
    registry.update("worker-a", {"node_id": "new"})
    model.apply_paths([registry.path_for("worker-a")])  # ... an event brings "new" ...
    model.apply_scan(scan)  # ... and the older read arrives after it
    assert model.get("worker-a").get("node_id") == "new"


def test_supervised_agents_follow_their_records(project: Path, clock: ManualClock) -> None:
    model, registry = model_of(project, clock)
    registry.register("worker", "tmux", tmux_session="rune-worker-tmux")
    registry.register("worker", "files")
    model.load()
    assert [r.key for r in model.supervised()] == ["worker-tmux"]
    registry.mark_crashed("worker-tmux", "gone")
    model.apply_paths([registry.path_for("worker-tmux")])
    assert model.supervised() == [r for r in model.supervised() if r.key == "worker-tmux"]


def test_a_hook_file_changes_the_phase_of_its_agent(project: Path, clock: ManualClock) -> None:
    model, registry = model_of(project, clock)
    registry.register("worker", "a")
    model.load()
    hook = registry.paths.hook_files / "worker-a.json"
    hook.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(hook, {"phase": "implementation"})
    change = model.apply_paths([hook])
    assert change.changed == {"worker-a"} and not change.counts
    assert model.phases["worker-a"] is not None


def test_an_unreadable_identity_is_a_red_record_not_an_error(
    project: Path, clock: ManualClock
) -> None:
    model, registry = model_of(project, clock)
    registry.paths.identities.mkdir(parents=True, exist_ok=True)
    bad = registry.paths.identities / "worker-bad.json"
    bad.write_text("{not json")
    change = model.apply_paths([bad])
    assert change.changed == {"worker-bad"}
    assert model.get("worker-bad").error and model.counts()["red"] == 1
    bad.write_text(json.dumps({"status": "active", "last_seen": "2026-02-26T12:00:00Z"}))
    model.apply_paths([bad])
    assert model.counts() == {"red": 0, "yellow": 0, "green": 1, "grey": 0}


def test_records_of_another_source_replace_the_whole_set(project: Path, clock: ManualClock) -> None:
    model, registry = model_of(project, clock)
    first = registry.register("worker", "a")
    second = registry.register("worker", "b")
    model.apply_records([first, second], whole=True)
    change = model.apply_records([second], whole=True)
    assert change.removed == {"worker-a"} and [r.key for r in model.snapshot()] == ["worker-b"]


@pytest.fixture
def no_cost_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paced rescans run whenever asked (their wait on their own cost is tested apart)."""
    monkeypatch.setattr(model_module, "RESCAN_COST_FACTOR", 0)


@pytest.fixture
def no_full_pass_cost(no_cost_wait: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """... and a full pass falls due on its period alone, however long it took."""
    monkeypatch.setattr(index_module, "COST_FACTOR", 0)


def paced_model(
    project: Path, clock: ManualClock, full_seconds: float
) -> tuple[FleetModel, Registry]:
    registry = Registry(Project(project, clock), LivenessSettings(60, 300))
    model = FleetModel(
        registry, HookFiles(Project(project, clock)), full_rescan_seconds=full_seconds
    )
    return model, registry


def write_in_place(path: Path, changes: dict[str, object]) -> None:
    """A write that keeps the inode and moves no directory mtime (no rename, no create)."""
    data = json.loads(path.read_text())
    data.update(changes)
    with open(path, "r+") as handle:
        handle.write(json.dumps(data))
        handle.truncate()


def age_directory(directory: Path) -> None:
    age_files(directory)
    os.utime(directory, ns=(OLD, OLD))


def settled(
    project: Path, clock: ManualClock, *names: str, full_seconds: float = 3600
) -> tuple[FleetModel, Registry]:
    """Agents whose files and directory are old, loaded, after the first paced pass (a
    full one: it notes the directory)."""
    model, registry = paced_model(project, clock, full_seconds=full_seconds)
    workers(registry, *names)
    age_directory(registry.paths.identities)
    model.load()
    model.rescan(paced=True)
    return model, registry


def test_a_paced_rescan_stats_no_file_while_the_directory_has_not_moved(
    no_cost_wait: None, project: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _ = settled(project, clock, "a", "b")
    lstats: list[str] = []
    real = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: lstats.append(path) or real(path))
    assert not model.rescan(paced=True)
    assert lstats == []


def test_a_paced_rescan_sees_a_replaced_file_at_once_because_its_directory_moved(
    no_cost_wait: None, project: Path, clock: ManualClock
) -> None:
    model, registry = settled(project, clock, "a", "b")
    path = registry.path_for("worker-b")
    atomic_write_json(path, {**json.loads(path.read_text()), "node_id": "n7"})
    assert model.rescan(paced=True).changed == {"worker-b"}
    assert model.get("worker-b").get("node_id") == "n7"


def test_a_write_in_place_is_recovered_by_the_next_full_pass_of_a_paced_rescan(
    no_cost_wait: None, project: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "COST_FACTOR", 0)  # a full pass due on every scan
    model, registry = settled(project, clock, "a", full_seconds=0)
    write_in_place(registry.path_for("worker-a"), {"node_id": "n8"})
    os.utime(registry.paths.identities, ns=(OLD, OLD))  # as if the directory never moved
    assert model.rescan(paced=True).changed == {"worker-a"}
    assert model.get("worker-a").get("node_id") == "n8"


def test_a_paced_rescan_waits_for_its_full_pass_to_see_a_write_in_place(
    no_cost_wait: None, project: Path, clock: ManualClock
) -> None:
    model, registry = settled(project, clock, "a")
    write_in_place(registry.path_for("worker-a"), {"node_id": "n9"})
    os.utime(registry.path_for("worker-a"), ns=(OLD + 1, OLD + 1))
    os.utime(registry.paths.identities, ns=(OLD, OLD))
    assert not model.rescan(paced=True)  # the full pass is not due yet
    assert model.rescan().changed == {"worker-a"}  # an unpaced rescan stats every file


def test_a_file_read_too_close_to_its_write_is_looked_at_again_by_a_paced_rescan(
    no_cost_wait: None, project: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "FINE_RACY_NS", 10**12)  # however slow the machine
    model, registry = paced_model(project, clock, full_seconds=3600)
    registry.register("worker", "a")
    os.utime(registry.paths.identities, ns=(OLD, OLD))
    model.load()  # the file was just written: its stamp is not trusted
    model.rescan(paced=True)
    write_in_place(registry.path_for("worker-a"), {"node_id": "n10-longer"})
    os.utime(registry.paths.identities, ns=(OLD, OLD))
    assert model.rescan(paced=True).changed == {"worker-a"}
    assert model.get("worker-a").get("node_id") == "n10-longer"


def test_a_paced_rescan_waits_a_multiple_of_its_own_cost_before_it_runs_again(
    project: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_module, "RESCAN_COST_FACTOR", 10**9)  # any cost: a long wait
    model, registry = paced_model(project, clock, full_seconds=0)
    registry.register("worker", "a")
    age_directory(registry.paths.identities)
    model.load()
    model.rescan(paced=True)
    path = registry.path_for("worker-a")
    atomic_write_json(path, {**json.loads(path.read_text()), "node_id": "n11"})
    assert not model.rescan(paced=True)  # too soon after the last one
    assert model.rescan().changed == {"worker-a"}  # an unpaced rescan always runs


def test_a_stamp_is_trusted_after_one_tick_of_its_file_systems_clock() -> None:
    fine, whole = 5 * 10**9 + 123_456_789, 5 * 10**9  # ns mtimes; whole seconds (FAT, ext3)
    assert trusted((1, fine, 10), fine + 50_000_000) is None  # within the same tick
    assert trusted((1, fine, 10), fine + 200_000_000) == (1, fine, 10)
    assert trusted((1, whole, 10), whole + 1_500_000_000) is None
    assert trusted((1, whole, 10), whole + 2_000_000_000) == (1, whole, 10)


def test_a_load_left_unjudged_has_the_same_problems_once_they_are_judged_all_at_once(
    project: Path, clock: ManualClock
) -> None:
    _, registry = model_of(project, clock)
    workers(registry, "a", "b", "c")
    registry.mark_crashed("worker-b", "gone")
    judged, _ = model_of(project, clock)
    judged.judge = judge_with(SupervisorSettings())
    judged.load()
    model, _ = model_of(project, clock)
    model.judge = judge_with(SupervisorSettings())
    change = model.load(judged=False)
    assert change.changed == {"worker-a", "worker-b", "worker-c"} and not change.problems
    assert model.problems == {} and model.problem_count() == 0
    later = model.judge_all()
    assert later.problems == {"worker-b"} and later.counts and not later.changed
    assert model.problems == judged.problems and model.problem_count() == 1
    assert not model.judge_all()  # judged again: nothing moved


# -- while inotify tells of every change (a local root, no event lost) ----------------------


@pytest.fixture
def lstats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: seen.append(path) or real(path))
    return seen


def heartbeat(path: Path, **changes: object) -> None:
    """The harness's write: a new file renamed over the old (the directory moves)."""
    atomic_write_json(path, {**json.loads(path.read_text()), **changes})


def test_a_watched_paced_rescan_stats_no_file_between_full_passes_though_the_directory_moves(
    no_cost_wait: None, project: Path, clock: ManualClock, lstats: list[str]
) -> None:
    model, registry = settled(project, clock, "a", "b")
    model.follow_events(True)
    path = registry.path_for("worker-b")
    heartbeat(path, node_id="n1")
    assert model.apply_paths([path]).changed == {"worker-b"}  # the event, read at once
    heartbeat(path, node_id="n2")  # its event still to come
    lstats.clear()
    assert not model.rescan(paced=True)
    assert lstats == []
    assert model.apply_paths([path]).changed == {"worker-b"}
    assert model.get("worker-b").get("node_id") == "n2"


def test_an_unwatched_paced_rescan_still_sees_a_replaced_file_at_once(
    no_cost_wait: None, project: Path, clock: ManualClock
) -> None:
    model, registry = settled(project, clock, "a", "b")
    model.follow_events(True)
    model.follow_events(False)  # the root turned out shared, or the watcher stopped
    heartbeat(registry.path_for("worker-a"), node_id="n3")
    assert model.rescan(paced=True).changed == {"worker-a"}


def test_a_watched_full_pass_finds_a_write_no_event_told_of_and_reads_nothing_else(
    no_full_pass_cost: None, project: Path, clock: ManualClock, counted_reads: list[str]
) -> None:
    model, registry = settled(project, clock, "a", "b", full_seconds=0)  # each pass full
    model.follow_events(True)
    seen = registry.path_for("worker-a")
    heartbeat(seen, node_id="n4")
    model.apply_paths([seen])  # read within milliseconds of its write: trusted, watched
    heartbeat(registry.path_for("worker-b"), node_id="n5")  # written by another host
    counted_reads.clear()
    assert model.rescan(paced=True).changed == {"worker-b"}
    assert counted_reads == ["worker-b.json"]
    assert model.get("worker-b").get("node_id") == "n5"


def test_events_lost_make_the_next_paced_rescan_read_every_file_again(
    no_cost_wait: None, project: Path, clock: ManualClock, counted_reads: list[str]
) -> None:
    model, registry = settled(project, clock, "a", "b")
    model.follow_events(True)
    heartbeat(registry.path_for("worker-a"), node_id="n6")  # its event lost in an overflow
    model.events_lost()
    counted_reads.clear()
    assert model.rescan(paced=True).changed == {"worker-a"}
    assert sorted(counted_reads) == ["worker-a.json", "worker-b.json"]
    assert model.get("worker-a").get("node_id") == "n6"


def test_a_watched_root_is_stat_ed_in_full_ten_times_as_seldom_and_a_shared_one_on_time(
    no_full_pass_cost: None,
    project: Path,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    counted_reads: list[str],
) -> None:
    now = [1000.0]
    monkeypatch.setattr(index_module.time, "monotonic", lambda: now[0])
    model, registry = settled(project, clock, "a", "b", full_seconds=30)
    model.follow_events(True)
    model.rescan(paced=True)  # the first watched full pass
    write_in_place(registry.path_for("worker-a"), {"node_id": "n7"})  # no event told of it
    counted_reads.clear()
    now[0] += 31
    assert model.rescan(paced=True).changed == set()  # watched: no full pass yet
    now[0] += 270  # 301 s after the full pass
    assert model.rescan(paced=True).changed == {"worker-a"}
    write_in_place(registry.path_for("worker-b"), {"node_id": "n8"})
    now[0] += 31
    model.follow_events(False)  # the root turned out shared: due 30 s after its last pass
    assert model.rescan(paced=True).changed == {"worker-b"}
    assert counted_reads == ["worker-a.json", "worker-b.json"]


def test_events_lost_while_a_full_pass_runs_leave_the_next_paced_scan_full(
    no_full_pass_cost: None, project: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(index_module.time, "monotonic", lambda: now[0])
    registry = paced_model(project, clock, full_seconds=30)[1]
    registry.register("worker", "a")
    index = index_module.StatIndex(registry.paths.identities, full_seconds=30)
    index.watched = True
    index.scan()  # a first full pass
    now[0] += 301
    listed = index_module.StatIndex._list

    def losing(self: index_module.StatIndex, known: dict[str, object]) -> object:
        listing = listed(self, known)  # type: ignore[arg-type]
        self.lost()  # the kernel's queue overflowed while this pass listed
        return listing

    monkeypatch.setattr(index_module.StatIndex, "_list", losing)
    index.scan(paced=True)  # due: a full pass, with events lost under it
    monkeypatch.setattr(index_module.StatIndex, "_list", listed)
    registry.register("worker", "b")  # a file no event told of (lost)
    assert "worker-b" in index.scan(paced=True).changed


# -- a heartbeat alone --------------------------------------------------------------------


def test_a_heartbeat_alone_is_a_beat_and_any_other_change_with_it_is_not(
    project: Path, clock: ManualClock
) -> None:
    model, registry = model_of(project, clock)
    workers(registry, "a", "b", "c")
    model.load()
    clock.advance(5)
    registry.heartbeat("worker-a")
    registry.heartbeat("worker-b")
    heartbeat(registry.path_for("worker-b"), node_id="n1")  # and a field with it
    registry.heartbeat("worker-c")
    hook = registry.paths.hook_files / "worker-c.json"
    hook.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(hook, {"phase": "implementation"})
    change = model.apply_paths(
        [registry.path_for(k) for k in ("worker-a", "worker-b", "worker-c")] + [hook]
    )
    assert change.changed == {"worker-a", "worker-b", "worker-c"}
    assert change.beats == {"worker-a"}  # b's fields moved; c's phase moved with its beat
    assert change.moved == {"worker-b", "worker-c"}


def test_a_heartbeat_judges_no_agent_without_problems_and_keeps_the_problems_of_others(
    project: Path, clock: ManualClock
) -> None:
    model, registry = model_of(project, clock)
    judge = judge_with(SupervisorSettings())
    judged: list[str] = []
    model.judge = lambda record, *rest: judged.append(record.key) or judge(record, *rest)
    workers(registry, "calm", "held")
    budget = {"state": "held", "detail": "over $5", "day": local_day(clock.now())}
    held = {"usd": 9.0, "budget": budget}
    registry.update("worker-held", {"cost": held})
    model.load()
    assert [p.kind for p in model.problems["worker-held"]] == ["budget"]
    clock.advance(5)
    judged.clear()
    for key in ("worker-calm", "worker-held"):
        registry.heartbeat(key)
    change = model.apply_paths([registry.path_for("worker-calm"), registry.path_for("worker-held")])
    assert change.beats == {"worker-calm", "worker-held"} and not change.problems
    assert judged == ["worker-held"]  # its problem could read differently: judged again
    assert [p.kind for p in model.problems["worker-held"]] == ["budget"]
    registry.mark_crashed("worker-calm", "gone")
    assert model.apply_paths([registry.path_for("worker-calm")]).problems == {"worker-calm"}


def test_a_hold_noted_after_midnight_shows_with_the_first_heartbeat_of_the_new_day(
    project: Path, clock: ManualClock
) -> None:
    model, registry = model_of(project, clock)
    model.judge = judge_with(SupervisorSettings())
    here = clock.now().astimezone()
    midnight = datetime.combine(here.date() + timedelta(days=1), time()).astimezone()
    clock.advance((midnight - here).total_seconds() - 60)  # 23:59, the console's time
    registry.register("worker", "a")
    model.load()
    clock.advance(90)  # 00:00:30: the hook notes a hold for the new day, and no heartbeat
    budget = {"state": "held", "detail": "over $5", "day": local_day(clock.now())}
    registry.update("worker-a", {"cost": {"usd": 9.0, "budget": budget}})
    model.apply_paths([registry.path_for("worker-a")])
    assert "worker-a" not in model.problems  # last seen yesterday: yesterday's budget
    clock.advance(10)
    registry.heartbeat("worker-a")  # the first heartbeat of the day: no mere beat
    change = model.apply_paths([registry.path_for("worker-a")])
    assert change.moved == {"worker-a"} and change.problems == {"worker-a"}
    assert [p.kind for p in model.problems["worker-a"]] == ["budget"]
