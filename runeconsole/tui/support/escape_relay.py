"""A lone escape reaches the console after ``ESCDELAY``, not after Textual's next poll.

An escape key arrives as the byte that also starts every other key's sequence, so a
terminal program waits a moment for more before it calls it escape (``ESCDELAY``, 10 ms
here: ``tui/__init__.py``). Textual (8.2) keeps that deadline, but its input thread looks
at it only when its wait on the terminal returns, and that wait is a tenth of a second
long: with no byte after it, every escape (a filter cleared, a window closed) reached the
console 100 ms late whatever ``ESCDELAY`` said. At 50,000 agents escape took 165 ms in a
tmux pane, of which the console worked 60-90.

``EscapeRelayDriver`` puts a thread between the terminal and Textual's input thread,
through a pipe: bytes are passed on as they come, but a chunk that ends in an escape
holds that byte back. If more follows within ``ESCDELAY`` it goes on in front of it (the
rest of a sequence split between two reads); if nothing does, the relay sends escape as
the keyboard protocol that needs no wait writes it (``CSI 27 u``, which Textual reads as
escape at once). Everything else Textual does with the terminal (its modes, its size,
suspending) is untouched: only the descriptor its input thread reads is the pipe's, for
as long as that thread runs. Used where Textual would use its Linux driver; the browser's
and the tests' drivers are left as they are.
"""

from __future__ import annotations

import os
import selectors
import threading

from textual import constants
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver

ESC = 0x1B
LONE_ESCAPE = b"\x1b[27u"  # escape, as a terminal in the disambiguating keyboard mode sends it


class EscapeRelay:
    """Copies bytes from ``source`` to ``sink`` until ``stop()`` or ``source`` ends; a
    trailing lone escape is held ``delay`` seconds, then sent as ``LONE_ESCAPE``. Stopping
    wakes the relay at once (a pipe of its own), so it reads no byte meant for whatever
    has the terminal next (a program the console is suspended for)."""

    def __init__(self, source: int, sink: int, delay: float) -> None:
        self.source, self.sink, self.delay = source, sink, delay
        self._wake_read, self._wake_write = os.pipe()

    def stop(self) -> None:
        """Ends ``run`` (before or while it runs); ``close`` once it has ended."""
        os.write(self._wake_write, b"!")

    def close(self) -> None:
        os.close(self._wake_read)
        os.close(self._wake_write)

    def run(self) -> None:
        held = False  # an escape read last, not yet passed on
        with selectors.DefaultSelector() as selector:
            selector.register(self.source, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            while True:
                ready = selector.select(self.delay if held else None)
                if any(key.fd == self._wake_read for key, _ in ready):
                    return
                if not ready:  # nothing after the escape: it was the key
                    held = False
                    if not self._send(LONE_ESCAPE):
                        return
                    continue
                try:
                    data = os.read(self.source, 4096)
                except OSError:
                    return
                if not data:  # the terminal is gone: Textual's thread sees the end too
                    self._send(b"\x1b" if held else b"")
                    return
                if held:
                    data, held = b"\x1b" + data, False
                if data[-1] == ESC:
                    data, held = data[:-1], True
                if data and not self._send(data):
                    return

    def _send(self, data: bytes) -> bool:
        """Write all of ``data``; False when the reader has gone."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.sink, view) :]
            except OSError:  # the pipe's read end closed: the input thread has ended
                return False
        return True


class EscapeRelayDriver(LinuxDriver):
    """Textual's Linux driver, its input thread reading the terminal through a relay."""

    def run_input_thread(self) -> None:
        terminal = self.fileno
        read_end, write_end = os.pipe()
        relay = EscapeRelay(terminal, write_end, constants.ESCAPE_DELAY)
        thread = threading.Thread(target=relay.run, name="escape-relay", daemon=True)
        thread.start()
        self.fileno = read_end
        try:
            super().run_input_thread()
        finally:
            self.fileno = terminal
            relay.stop()
            os.close(read_end)  # a relay blocked writing is released (EPIPE)
            thread.join()
            relay.close()
            os.close(write_end)


def with_escape_relay(driver: type[Driver]) -> type[Driver]:
    """The driver to run: ``EscapeRelayDriver`` where Textual chose its Linux driver."""
    return EscapeRelayDriver if driver is LinuxDriver else driver
