"""Running ``runeconsole`` as the tests do: what an in-process run printed, and the
environment a real process needs to import this checkout."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from tests.support.paths import REPO


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> object:
        return json.loads(self.out)


def cli_env() -> dict[str, str]:
    """This environment with the checkout importable: for ``runeconsole`` as a process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env
