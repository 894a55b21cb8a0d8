"""The supervisor's monitor loop, run inside the console on a worker thread.

One monitor at a time: while another (``runeconsole monitor``) holds the lock, the
console follows its saved passes and takes over when it ends. Reports reach the UI
thread through ``deliver`` (the app's ``call_from_thread``); once the console is
closing, the loop is told to stop instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from textual.css.query import NoMatches

from runeconsole.services.supervision.service import MonitorReport, Supervisor


class ConsoleMonitor:
    def __init__(self, supervisor: Supervisor, deliver: Callable[[MonitorReport], None]) -> None:
        self.supervisor = supervisor
        self.deliver = deliver
        self._stop = threading.Event()
        self._idle = threading.Event()  # no monitor pass under way in this console
        self._idle.set()

    def run(self) -> None:
        """The loop (blocking: run it on a worker thread) until ``stop``."""
        self._idle.clear()
        try:
            self.supervisor.run_monitor(stop=self._stop, on_report=self._report)
        finally:
            self._idle.set()

    def stop(self, timeout: float = 0.0) -> bool:
        """Stop the loop and wait up to ``timeout`` for its pass to end: until then it may
        still write the project's state. True when it has ended."""
        self._stop.set()
        return self._idle.wait(timeout)

    def _report(self, report: MonitorReport) -> None:
        if self._stop.is_set():  # closing: the screen may no longer take calls
            return
        try:
            self.deliver(report)
        except (RuntimeError, NoMatches):  # the console is closing (its panes may be gone)
            self._stop.set()
