"""The agents as typed records: counts by colour and by source kept as records change,
problems judged once, in the model, when an agent or its reading changes."""

from __future__ import annotations

from datetime import timedelta

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.timeutil import iso_z
from runeconsole.services.fleet import FleetChange, FleetRecords
from runeconsole.services.fleet.tally import Tally
from runeconsole.services.liveness import AgentRecord, LivenessSettings
from runeconsole.services.pane_observation import RUNNING, AgentObservation
from runeconsole.services.pane_patterns import PaneReading
from runeconsole.services.supervision.problems import judge_with
from runeconsole.services.supervision.settings import SupervisorSettings


def agent(
    key: str, clock: ManualClock, *, silent: float = 0, status: str = "active"
) -> AgentRecord:
    seen = iso_z(clock.now() - timedelta(seconds=silent))
    fields = {"agent_id": f"{key}-1", "status": status, "last_heartbeat": seen, "role": "worker"}
    return AgentRecord(key, "", fields)


def records(clock: ManualClock) -> FleetRecords:
    return FleetRecords(LivenessSettings(60, 300), clock, judge=judge_with(SupervisorSettings()))


def test_a_tally_moves_one_count_per_change_and_reads_without_walking_the_items() -> None:
    tally = Tally()
    assert tally.put("a", "green", "one") and tally.put("b", "green", "two")
    assert not tally.put("a", "green", "one")  # nothing moved
    assert tally.put("a", "red", "one")
    assert tally.counts("one") == {"red": 1} and tally.counts() == {"red": 1, "green": 1}
    assert tally.put("c", "problems", "two", weight=3) and tally.count("problems", "two") == 3
    assert tally.drop("c") and tally.count("problems") == 0 and not tally.drop("c")


def test_counts_are_kept_by_source_as_records_arrive_change_colour_and_go(
    clock: ManualClock,
) -> None:
    fleet = records(clock)
    fleet.apply_records([agent("one/a", clock), agent("one/b", clock)], source="one")
    fleet.apply_records([agent("two/c", clock, silent=120)], source="two")
    assert fleet.counts("one")["green"] == 2 and fleet.counts("two")["yellow"] == 1
    assert fleet.counts()["green"] == 2 and fleet.counts()["yellow"] == 1
    change = fleet.remove(["one/a"])
    assert change.removed == {"one/a"} and change.counts
    assert fleet.counts("one")["green"] == 1
    clock.advance(200)  # one/b turns yellow on its deadline, two/c red
    assert fleet.tick(clock.now()).changed == {"one/b", "two/c"}
    assert fleet.counts("one")["yellow"] == 1 and fleet.counts("two")["red"] == 1


def test_records_judged_by_their_source_keep_its_colours(clock: ManualClock) -> None:
    fleet = records(clock)
    quiet = agent("far/q", clock, silent=1000)  # red by any settings here
    quiet.liveness = "green"  # as the source judged it, by its own settings
    fleet.apply_records([quiet], source="far", judged=True)
    clock.advance(10_000)
    assert not fleet.tick(clock.now()) and fleet.counts("far")["green"] == 1


def test_problems_are_judged_once_when_an_agent_changes_and_counted_by_source(
    clock: ManualClock,
) -> None:
    fleet = records(clock)
    fleet.apply_records([agent("one/a", clock)], source="one")
    assert fleet.problems == {} and fleet.problem_count("one") == 0
    change = fleet.apply_records([agent("one/a", clock, status="crashed")], source="one")
    assert change.problems == {"one/a"} and change.counts
    [problem] = fleet.problems["one/a"]
    assert (problem.kind, fleet.problem_count("one"), fleet.problem_count("two")) == (
        "crashed",
        1,
        0,
    )
    again = fleet.apply_records([agent("one/a", clock, status="crashed")], source="one")
    assert again.problems == frozenset()  # judged again, the same: nothing to redraw
    assert fleet.remove(["one/a"]).problems == {"one/a"} and fleet.problem_count() == 0


def test_a_reading_of_a_waiting_pane_is_a_problem_and_its_end_clears_it(
    clock: ManualClock,
) -> None:
    fleet = records(clock)
    fleet.apply_records([agent("a", clock)])
    waiting = PaneReading(waiting_for_input="permission", prompt="Run it?")
    seen = AgentObservation("a", "a-1", "rune-a", RUNNING, iso_z(clock.now()), screen=waiting)
    change = fleet.observe("a", seen)
    assert change.changed == {"a"} and change.problems == {"a"}
    assert [p.kind for p in fleet.problems["a"]] == ["waiting"]
    assert fleet.observe("a", None).problems == {"a"} and "a" not in fleet.problems


def test_a_stale_agent_s_problem_is_restated_as_its_silence_grows(clock: ManualClock) -> None:
    fleet = records(clock)
    fleet.apply_records([agent("a", clock, silent=400)])
    [problem] = fleet.problems["a"]
    assert problem.detail == "no heartbeat for 6m40s"
    clock.advance(60)
    assert fleet.restate(["a"], clock.now()).problems == {"a"}
    assert fleet.problems["a"][0].detail == "no heartbeat for 7m40s"


# -- a heartbeat alone --------------------------------------------------------------------


def beat(record: AgentRecord, clock: ManualClock, **changes: object) -> AgentRecord:
    """``record`` read again after a heartbeat written now (and ``changes``, if any)."""
    stamp = iso_z(clock.now())
    fields = {**record.fields, "last_heartbeat": stamp, "last_seen": stamp, **changes}
    again = AgentRecord(record.key, record.location, fields)
    again.rejudge(clock.now(), LivenessSettings(60, 300))
    return again


def judged(record: AgentRecord, clock: ManualClock) -> AgentRecord:
    record.rejudge(clock.now(), LivenessSettings(60, 300))
    return record


def test_a_record_read_again_after_a_heartbeat_alone_is_its_beat(clock: ManualClock) -> None:
    before = judged(agent("a", clock, silent=30), clock)
    assert beat(before, clock).beat_of(before)
    assert not beat(before, clock, node_id="n2").beat_of(before)  # a field moved with it
    assert not beat(before, clock, status="crashed").beat_of(before)
    assert not beat(before, clock).beat_of(None)  # new: everything is worked out


def test_a_heartbeat_that_changes_the_colour_or_goes_back_in_time_is_no_mere_beat(
    clock: ManualClock,
) -> None:
    silent = judged(agent("a", clock, silent=200), clock)  # yellow
    assert not beat(silent, clock).beat_of(silent)  # green again: the counts move
    fresh = judged(agent("a", clock), clock)
    clock.advance(-10)  # a writer whose clock runs behind
    assert not beat(fresh, clock).beat_of(fresh)


def test_changes_joined_keep_a_beat_only_while_no_part_changed_it_more() -> None:
    beats = FleetChange(frozenset({"a", "b"}), beats=frozenset({"a", "b"}))
    other = FleetChange(frozenset({"b", "c"}), removed=frozenset({"d"}), beats=frozenset({"c"}))
    joined = beats | other
    assert joined.changed == {"a", "b", "c"} and joined.beats == {"a", "c"}
    assert joined.moved == {"b", "d"}
    assert (joined | FleetChange(removed=frozenset({"a"}))).beats == {"c"}
