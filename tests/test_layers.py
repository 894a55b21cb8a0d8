"""The floors of the package are a checked contract (``[tool.importlinter]`` in
pyproject.toml): cli, then the console and the demo, services, adapters, core; imports
point down only, among the service packages too (no two import each other), and nothing
below the console reaches Textual or Rich."""

from __future__ import annotations

import pytest
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

from tests.support.paths import REPO


def test_imports_point_down_the_floors(capsys: pytest.CaptureFixture[str]) -> None:
    status = lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True)
    report = capsys.readouterr().out
    assert status == EXIT_STATUS_SUCCESS, report
    assert "3 kept, 0 broken" in report
