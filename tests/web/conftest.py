"""The served console's fixtures: a project served by a real ``runeconsole serve``, and
one headless Chromium for the module's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import chromium
from tests.support.served import Served, root_args, serving


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def served(project: Path) -> Iterator[Served]:
    with serving(*root_args(project)) as running:
        yield running
