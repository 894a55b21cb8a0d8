"""A program to stand in a tmux pane for an agent that reads pastes, as Claude Code does.

``python -m tests.support.paste_reader LOG [SCREEN]`` puts its terminal in raw mode, asks
for bracketed paste (``ESC [ ? 2004 h``, as Claude Code does), draws ``SCREEN`` (a file:
for instance a captured Claude Code dialog) or a prompt, then appends every byte it reads
to ``LOG``, so a test sees exactly what a paste delivered: ``ESC [ 200 ~`` text
``ESC [ 201 ~``, then the Enter (``\\r``). It echoes what it reads, printably, so the text
is also visible on its screen.
"""

from __future__ import annotations

import os
import sys
import termios
import tty
from pathlib import Path

PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"


def main(log: str, screen: str | None = None) -> None:
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    try:
        out = sys.stdout
        out.write("\x1b[?2004h")
        drawn = Path(screen).read_text(encoding="utf-8") if screen else "> "
        out.write(drawn.replace("\n", "\r\n"))
        out.flush()
        with open(log, "ab", buffering=0) as sink:
            while True:
                data = os.read(fd, 65536)
                if not data:
                    return
                sink.write(data)
                shown = data.replace(PASTE_START, b"").replace(PASTE_END, b"")
                shown = shown.replace(b"\r", b"\r\n").replace(b"\n", b"\r\n")
                os.write(sys.stdout.fileno(), shown.replace(b"\r\r", b"\r"))
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    main(*sys.argv[1:3])
