"""The policy table is one table: the retention table's rows in docs/protocols.md are the
kinds the code prunes, with their defaults, and a talisman's values are what
``prune --policy`` prints."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runeconsole.cli.retention import limit
from runeconsole.services.retention.settings import POLICIES
from tests.support.cli import CliResult
from tests.support.paths import REPO


def test_the_protocols_page_lists_every_kind_with_its_default() -> None:
    page = (REPO / "docs" / "protocols.md").read_text()
    for kind in POLICIES:
        then = "monthly archive" if kind.archived else "deleted"
        kept = limit(kind.default.days, kind.default.keep)
        row = f"| `{kind.name}` | {kind.what} | `{kind.where}` | {kept} | {then} |"
        assert row in page, row


def test_prune_policy_prints_the_talisman_s_values(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  retention:\n    questions: {days: 2, keep: 0}\n    archive: {months: 0}\n"
    )

    printed = cli("prune", "--policy", "--root", str(project)).out

    assert "questions      2 days " in printed
    assert "permissions    7 days, at most 10,000" in printed
    assert "archive" in printed and "kept forever" in printed
