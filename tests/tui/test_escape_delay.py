"""A lone escape is recognised after 10 ms (tmux's own ``escape-time``), not Textual's
100 (``runeconsole/tui``'s package sets ``ESCDELAY`` before Textual reads it), and a
user's own value is kept."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = (
    "import sys, runeconsole.cli; loaded = 'textual' in sys.modules; "
    "import runeconsole.tui.console.app, textual.constants as c; "
    "print(loaded, c.ESCAPE_DELAY)"
)


def probe(**env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "ESCDELAY"} | env
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=environ, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_console_waits_10_ms_for_the_rest_of_an_escape_sequence() -> None:
    # The CLI loads no Textual before the console's package: the setting lands first.
    assert probe() == "False 0.01"


def test_an_escdelay_of_the_users_own_is_kept() -> None:
    assert probe(ESCDELAY="80") == "False 0.08"
