"""The fake agent's terminal, as Claude Code's looks and reads: the screen it draws
(transcript, a prompt or the input box, the context left) and the keys, read one by one
so a lone Esc counts at once."""

from __future__ import annotations

import os
import select
import sys
import termios
import tty

WIDTH = 100
TRANSCRIPT_LINES = 30
ESCAPE = "<esc>"

Prompt = tuple[str, str, str, list[str]]  # title, detail, question, options


def screen(key: str, transcript: list[str], prompt: Prompt | None, context: float) -> str:
    """The whole screen, cleared and redrawn."""
    box = "─" * (WIDTH - 2)
    out = ["\x1b[2J\x1b[H", "✻ fake Claude Code · " + key, "", *transcript]
    if prompt is not None:
        title, detail, question, options = prompt
        out += [f"╭{box}╮", f"│ {title}", f"│   {detail}" if detail else "│", f"│ {question}"]
        out += [f"│ {'❯' if i == 0 else ' '} {i + 1}. {o}" for i, o in enumerate(options)]
        out += [f"╰{box}╯", "  Enter to select · Esc to cancel" if not detail else ""]
    else:
        out += [f"╭{box}╮", "│ > ", f"╰{box}╯"]
        status = f"Context left until auto-compact: {max(0, int(context))}%"
        out.append("  ? for shortcuts".ljust(WIDTH - len(status)) + status)
    return "\n".join(out) + "\n"


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
