"""The command textual-serve runs through a shell for each browser session."""

from __future__ import annotations

import os
import subprocess

from runeconsole.web.app import console_command


def test_every_argument_stays_one_and_animations_are_off() -> None:
    command = console_command(["sh", "-c", 'printf "%s|" "$1" "$TEXTUAL_ANIMATIONS"', "-", "a b'c"])
    out = subprocess.run(
        command, shell=True, capture_output=True, text=True, check=True, env=dict(os.environ)
    )
    assert out.stdout == "a b'c|none|"
