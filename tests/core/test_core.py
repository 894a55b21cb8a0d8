"""core/: atomic files, exclusive create, tolerant reads, validation, config."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runeconsole.core.config import Talisman
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import (
    atomic_write_bytes,
    atomic_write_json,
    create_exclusive,
    read_json_object,
)
from runeconsole.core.pids import pid_alive, process_start, zombie_exit
from runeconsole.core.timeutil import format_age, parse_iso
from runeconsole.core.validate import contained, validate_id


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b.json"
    atomic_write_json(target, {"x": 1})
    atomic_write_json(target, {"x": 2})
    assert read_json_object(target) == {"x": 2}
    assert os.listdir(target.parent) == ["b.json"]


def test_create_exclusive_never_replaces(tmp_path: Path) -> None:
    target = tmp_path / "answer.json"
    create_exclusive(target, b'{"first": true}')
    with pytest.raises(FileExistsError):
        create_exclusive(target, b'{"second": true}')
    assert read_json_object(target) == {"first": True}
    assert os.listdir(tmp_path) == ["answer.json"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty file"),
        (b'{"agent_id": "x', "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b"\xff\xfe\x00garbage", "not"),
        (b"[" * 100000 + b"]" * 100000, "JSON"),
    ],
)
def test_read_json_object_names_the_reason(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "bad.json"
    atomic_write_bytes(path, content)
    with pytest.raises(UnreadableFile) as caught:
        read_json_object(path)
    assert reason in caught.value.reason


def test_read_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="missing"):
        read_json_object(tmp_path / "nope.json")
    with pytest.raises(UnreadableFile, match="directory"):
        read_json_object(tmp_path)


def test_a_fifo_where_a_file_belongs_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "t.q1.question")
    with pytest.raises(UnreadableFile, match="not a regular file"):
        read_json_object(tmp_path / "t.q1.question")


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e400", "1" + "0" * 400])
def test_config_numbers_must_be_finite(tmp_path: Path, value: str) -> None:
    write_talisman(tmp_path, f"question_relay:\n  timeout_seconds: {value}\n")
    talisman = Talisman.load(tmp_path, strict=False)
    assert talisman.section("question_relay").number("timeout_seconds", 180.0) == 180.0
    assert talisman.problems and "timeout_seconds" in talisman.problems[0]


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "a b", "x;rm -rf /", "$(id)", "é", "a" * 129])
def test_validate_id_refuses(bad: str) -> None:
    with pytest.raises(InvalidInput):
        validate_id(bad, "name")


def test_validate_id_accepts() -> None:
    assert validate_id("worker-parser_2") == "worker-parser_2"


def test_contained_refuses_escapes(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    assert contained(tmp_path, "inside") == (tmp_path / "inside").resolve()
    with pytest.raises(InvalidInput, match="outside the project root"):
        contained(tmp_path, "../elsewhere")
    os.symlink("/etc", tmp_path / "link")
    with pytest.raises(InvalidInput):
        contained(tmp_path, "link/passwd")


def write_talisman(root: Path, text: str) -> None:
    atomic_write_bytes(root / ".claude" / "talisman.yml", text.encode())


def test_config_defaults_when_absent(tmp_path: Path) -> None:
    talisman = Talisman.load(tmp_path)
    assert talisman.section("runeconsole").number("x", 60.0) == 60.0


def test_config_bad_value_names_file_key_and_allowed(tmp_path: Path) -> None:
    write_talisman(tmp_path, "runeconsole:\n  heartbeat_interval_seconds: soon\n")
    with pytest.raises(RuneError) as caught:
        Talisman.load(tmp_path).section("runeconsole").number(
            "heartbeat_interval_seconds", 60.0, minimum=1
        )
    message = str(caught.value)
    assert "talisman.yml" in message
    assert "runeconsole.heartbeat_interval_seconds" in message
    assert "a number and >= 1" in message


def test_config_lenient_records_problems_and_uses_defaults(tmp_path: Path) -> None:
    write_talisman(tmp_path, "runeconsole: [1, 2\n")
    talisman = Talisman.load(tmp_path, strict=False)
    assert talisman.problems and "not valid YAML" in talisman.problems[0]
    write_talisman(tmp_path, "runeconsole:\n  flag: 3\n  mode: fast\n")
    talisman = Talisman.load(tmp_path, strict=False)
    section = talisman.section("runeconsole")
    assert section.boolean("flag", True) is True
    assert section.choice("mode", "slow", ("slow", "safe")) == "slow"
    assert len(talisman.problems) == 2
    assert "true or false" in talisman.problems[0]
    assert "slow | safe" in talisman.problems[1]


def test_config_refuses_python_tags(tmp_path: Path) -> None:
    write_talisman(tmp_path, "runeconsole: !!python/object/apply:os.system ['true']\n")
    talisman = Talisman.load(tmp_path, strict=False)
    assert talisman.problems


def test_time_helpers() -> None:
    assert parse_iso("2026-02-26T01:44:00Z") == parse_iso("2026-02-26T01:44:00+00:00")
    assert parse_iso("2026-02-26T01:44:00.123456") is not None
    assert parse_iso("yesterday") is None and parse_iso(5) is None
    # The ends of the calendar would overflow any arithmetic done on them.
    assert parse_iso("9999-12-31T23:59:00Z") is None
    assert parse_iso("0001-01-01T00:00:00+14:00") is None
    assert parse_iso("9999-12-31T23:59:00-14:00") is None
    assert [format_age(s) for s in (None, 5, 65, 3700, 90000)] == [
        "-",
        "5s",
        "1m05s",
        "1h01m",
        "1d1h",
    ]


def test_a_key_no_loader_reads_is_warned_about_once(tmp_path: Path) -> None:
    from runeconsole.services.registry import LivenessSettings
    from runeconsole.services.supervision.settings import SupervisorSettings

    write_talisman(
        tmp_path,
        "runeconsole:\n  stale_after_secs: 30\n  supervisor:\n    auto_handof: true\n"
        "  tmux:\n    socket_name: fleet\n",
    )
    talisman = Talisman.load(tmp_path)
    LivenessSettings.from_talisman(talisman)
    SupervisorSettings.from_talisman(talisman, environ={})
    assert len(talisman.warnings) == 2, talisman.warnings
    assert "runeconsole.stale_after_secs is not a setting" in talisman.warnings[0]
    assert "runeconsole.supervisor.auto_handof is not a setting" in talisman.warnings[1]
    assert "auto_handoff" in talisman.warnings[1]  # the known keys are listed
    assert talisman.problems == []


def test_a_pid_is_alive_only_while_its_process_runs() -> None:
    assert pid_alive(os.getpid()) and process_start(os.getpid()) is not None
    for nobody in (None, 0, -1, True, 2**22 + 12345, 2**80):
        assert not pid_alive(nobody)  # type: ignore[arg-type]
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    deadline = time.monotonic() + 30
    while zombie_exit(child.pid) == (None, None) and time.monotonic() < deadline:
        time.sleep(0.01)
    # Exited but not yet reaped: the pid still exists, the process does not run.
    assert zombie_exit(child.pid) == (3, None)
    assert not pid_alive(child.pid) and process_start(child.pid) is None
    assert child.wait(timeout=10) == 3
    assert not pid_alive(child.pid)


def test_the_collector_is_paused_while_a_fleet_is_read_and_back_after_even_on_an_error() -> None:
    import gc

    from runeconsole.core.gc_passes import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # another reader overlapping
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    try:
        with collector_paused():
            raise ValueError("bad read")
    except ValueError:
        pass
    assert gc.isenabled()
