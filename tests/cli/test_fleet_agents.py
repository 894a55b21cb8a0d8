"""``runeconsole agents --fleet FILE``: every agent of every source in one listing, keys
``source/key``; a source that cannot be read is said on stderr while the others list."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runeconsole.core.timeutil import iso_z
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from tests.support.fleet import fleet_file, project_root
from tests.support.sshd import Sshd


def test_agents_of_two_roots_are_listed_by_source_and_a_missing_root_is_a_warning_and_exit_1(
    tmp_path: Path, cli: Callable
) -> None:
    shop, ml = project_root(tmp_path, "shop", "a", "b"), project_root(tmp_path, "ml", "a")
    Registry(Project(ml)).mark_crashed("worker-a")
    fleet = fleet_file(
        tmp_path,
        {"name": "shop", "root": shop},
        {"name": "ml", "root": ml},
        {"name": "gone", "root": tmp_path / "nowhere"},
    )

    listed = cli("agents", "--fleet", str(fleet), "--json")

    assert listed.code == 1, listed.err  # a source could not be read: listed all the same
    rows = json.loads(listed.out)
    assert [(r["key"], r["source"], r["status"]) for r in rows] == [
        ("ml/worker-a", "ml", "crashed"),
        ("shop/worker-a", "shop", "active"),
        ("shop/worker-b", "shop", "active"),
    ]
    assert "source gone is down" in listed.err and "no such directory" in listed.err
    table = cli("agents", "--fleet", str(fleet))
    assert "shop/worker-b" in table.out and "ml/worker-a" in table.out and "crashed" in table.out


def test_an_agent_on_a_host_over_ssh_is_listed_under_its_source(
    sshd: Sshd, tmp_path: Path, cli: Callable
) -> None:
    far, near = project_root(tmp_path, "far", "x"), project_root(tmp_path, "near", "y")
    far_source = {"name": "far", "host": "alpha", "root": far, "command": sshd.remote_command()}
    fleet = fleet_file(
        tmp_path, {**far_source, "ssh": sshd.ssh_prefix}, {"name": "near", "root": near}
    )

    listed = cli("agents", "--fleet", str(fleet), "--json")

    assert listed.code == 0, listed.err
    assert {(r["key"], r["source"]) for r in json.loads(listed.out)} == {
        ("far/worker-x", "far"),
        ("near/worker-y", "near"),
    }


@pytest.mark.e2e
def test_stale_only_keeps_the_agents_one_root_would_call_stale(
    tmp_path: Path, cli: Callable
) -> None:
    shop = project_root(tmp_path, "shop", "late", "stale", "fresh")
    registry = Registry(Project(shop))
    for name, seconds in (("late", 200), ("stale", 1000)):  # yellow, red
        seen = datetime.now(UTC) - timedelta(seconds=seconds)
        registry.update(f"worker-{name}", {"last_heartbeat": iso_z(seen), "last_seen": iso_z(seen)})
        os.utime(registry.path_for(f"worker-{name}"), (seen.timestamp(), seen.timestamp()))
    fleet = fleet_file(tmp_path, {"name": "shop", "root": shop}, {"name": "ml", "root": shop})

    listed = cli("agents", "--fleet", str(fleet), "--stale-only", "--json")
    one = cli("agents", "--root", str(shop), "--stale-only", "--json")

    assert [r["key"] for r in json.loads(listed.out)] == ["ml/worker-stale", "shop/worker-stale"]
    assert [r["key"] for r in json.loads(one.out)] == ["worker-stale"]
