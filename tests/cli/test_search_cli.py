"""``runeconsole search``: hits newest first with agent, time, speaker and the words marked;
``--json``; every filter; the first search builds the index, ``--rescan`` reads what
changed, ``--rebuild`` starts over; a query with nothing to search for is a usage error,
nothing found exits 1, and a corrupt index is rebuilt with a message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runeconsole.services.conversations.locate import project_dir_name
from tests.support.cli import CliResult
from tests.support.index_transcripts import Session, identity


def hits(done: CliResult) -> list[dict[str, Any]]:
    found = done.json()
    assert isinstance(found, list), done.err
    return found


@pytest.fixture
def sessions(project: Path, private_claude_config: Path) -> tuple[Session, Session]:
    """Two agents' sessions where Claude Code keeps the project's transcripts."""
    folder = private_claude_config / "projects" / project_dir_name(project.resolve())
    a, b = Session(folder), Session(folder)
    identity(project, "worker-a", "worker", a)
    identity(project, "reviewer-b", "reviewer", b)
    a.write(a.prompt("Please run the database migration", 1))
    a.tool("Bash", {"command": "alembic upgrade head"}, "ERROR: relation users exists", 2)
    a.write(a.text("The migration failed: the users table already exists.", 3))
    b.write(b.prompt("Review the migrations folder", 10))
    b.write(b.text("Migrations look fine; nothing about users.", 12))
    return a, b


def test_hits_are_printed_newest_first_with_the_words_marked(
    project: Path, sessions: tuple[Session, Session], cli: Callable[..., CliResult]
) -> None:
    done = cli("search", "users", "--root", str(project))

    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("2026-03-01 12:12  reviewer-b")
    assert "nothing about [users]." in lines[0]
    assert "worker-a" in lines[2] and "assistant Bash" in lines[2]
    assert "ERROR: relation [users] exists" in lines[2]
    assert "indexed: 2 transcripts" in done.err  # the first search built the index


def test_json_gives_each_hit_with_its_place_and_marks(
    project: Path, sessions: tuple[Session, Session], cli: Callable[..., CliResult]
) -> None:
    done = cli("search", "alembic", "--json", "--root", str(project))

    (hit,) = hits(done)
    assert hit["agent"] == "worker-a" and hit["role"] == "worker" and hit["tool"] == "Bash"
    assert hit["path"] == str(sessions[0].path) and hit["offset"] > 0
    start, end = hit["marks"][0]
    assert hit["snippet"][start:end] == "alembic"
    assert done.err == ""


@pytest.mark.parametrize(
    ("options", "agents"),
    [
        (["--agent", "reviewer-b"], {"reviewer-b"}),
        (["--role", "worker"], {"worker-a"}),
        (["--tool", "Bash"], {"worker-a"}),
        (["--speaker", "user"], {"worker-a", "reviewer-b"}),
        (["--since", "2026-03-01T12:05Z"], {"reviewer-b"}),
        (["--limit", "1"], {"reviewer-b"}),
    ],
)
def test_every_filter_is_an_option(
    project: Path,
    sessions: tuple[Session, Session],
    cli: Callable[..., CliResult],
    options: list[str],
    agents: set[str],
) -> None:
    done = cli("search", "migra* OR users", *options, "--json", "--root", str(project))
    assert {hit["agent"] for hit in hits(done)} == agents


def test_the_index_is_read_again_only_when_asked(
    project: Path, sessions: tuple[Session, Session], cli: Callable[..., CliResult]
) -> None:
    cli("search", "users", "--root", str(project))
    a, _ = sessions
    a.write(a.text("a pelican landed", 20))

    assert cli("search", "pelican", "--root", str(project)).code == 1
    found = cli("search", "pelican", "--rescan", "--root", str(project))
    assert found.code == 0 and "[pelican]" in found.out
    assert "indexed: 2 transcripts, 1 read" in found.err

    rebuilt = cli("search", "--rebuild", "--root", str(project))
    assert rebuilt.code == 0 and "2 read" in rebuilt.err
    assert "[pelican]" in cli("search", "pelican", "--root", str(project)).out


def test_a_query_that_begins_with_a_dash_goes_by_query_option(
    project: Path, sessions: tuple[Session, Session], cli: Callable[..., CliResult]
) -> None:
    done = cli("search", "--query=-failed migration", "--json", "--root", str(project))
    assert [h["speaker"] for h in hits(done)] == ["user"]


@pytest.mark.parametrize("query", ['"" ***', "-", "NOT"])
def test_nothing_to_search_for_is_a_usage_error(
    project: Path, sessions: tuple[Session, Session], cli: Callable[..., CliResult], query: str
) -> None:
    done = cli("search", f"--query={query}", "--root", str(project))
    if query == "NOT":  # a word like any other
        assert done.code == 1 and "nothing found" in done.err
        return
    assert done.code == 2 and "nothing to search for" in done.err


def test_a_bad_since_or_speaker_is_refused(
    project: Path, sessions: tuple[Session, Session], cli: Callable[..., CliResult]
) -> None:
    done = cli("search", "users", "--since", "yesterday-ish", "--root", str(project))
    assert done.code == 2 and "--since" in done.err


def test_a_corrupt_index_is_rebuilt_with_a_message(
    project: Path, sessions: tuple[Session, Session], cli: Callable[..., CliResult]
) -> None:
    cli("search", "users", "--root", str(project))
    database = project / ".claude" / "state" / "conversations.sqlite"
    for name in ("conversations.sqlite-wal", "conversations.sqlite-shm"):
        (database.parent / name).unlink(missing_ok=True)
    database.write_bytes(b"garbage " * 1000)

    done = cli("search", "alembic", "--root", str(project))

    assert done.code == 0 and "[alembic]" in done.out
    assert "not a usable conversation index" in done.err and "rebuilt" in done.err
