"""The floors of the package are a checked contract (``[tool.importlinter]`` in
pyproject.toml): cli, then the console and the demo, services, adapters, core; imports
point down only, among the service packages too (no two import each other), among the
console's rooms too (the consoles, their base, the panes, the screens, the windows, the
cells, the ground floor), and nothing below the console reaches Textual or Rich."""

from __future__ import annotations

import tomllib

import pytest
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

from tests.support.paths import REPO


def test_imports_point_down_the_floors(capsys: pytest.CaptureFixture[str]) -> None:
    status = lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True)
    report = capsys.readouterr().out
    assert status == EXIT_STATUS_SUCCESS, report
    assert "5 kept, 0 broken" in report


def test_no_two_service_packages_may_import_each_other() -> None:
    """Siblings on one floor are independent (``a | b``): a ``a : b`` floor, whose members
    may import one another, is a circle the contract would keep."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        containers = contract.get("containers", ["runeconsole"])
        if not all(c == "runeconsole" or c.startswith("runeconsole.services") for c in containers):
            continue  # the console's rooms keep their own contract
        for layer in contract.get("layers", []):
            assert ":" not in layer, f"{contract['name']}: {layer}"
