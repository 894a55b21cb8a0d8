"""The fake agent's keyboard: the terminal's input key by key, as Claude Code reads it."""

from __future__ import annotations

import os
import select
import sys
import termios
import tty

ESCAPE = "<esc>"


class Keys:
    """The terminal's input key by key (cbreak mode, as Claude Code reads it), so Esc
    counts at once: whole lines, and ``ESCAPE`` for a lone Esc."""

    def __init__(self) -> None:
        self.fd = sys.stdin.fileno()
        self.buffer = ""
        self.saved = None
        if os.isatty(self.fd):
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)

    def restore(self) -> None:
        if self.saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def read(self, timeout: float) -> list[str]:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        data = os.read(self.fd, 4096)
        if not data:  # input closed: nobody can answer any more
            raise SystemExit(0)
        self.buffer += data.decode("utf-8", "replace").replace("\r", "\n")
        keys: list[str] = []
        while True:
            esc, newline = self.buffer.find("\x1b"), self.buffer.find("\n")
            if esc >= 0 and (newline < 0 or esc < newline):
                keys.append(ESCAPE)  # what was typed before it on the line is dropped
                self.buffer = self.buffer[esc + 1 :]
            elif newline >= 0:
                keys.append(self.buffer[:newline])
                self.buffer = self.buffer[newline + 1 :]
            else:
                return keys
