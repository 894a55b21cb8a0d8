"""Work that may wait, kept behind the frame the operator is waiting for.

The screen is drawn on a 60-a-second grid: a change asked for just after one frame waits
for the next grid point, up to 16.7 ms. A timer set for the same moment (the next chunk
of a fill, freeing a replaced table's rows) can win that race and hold the loop for tens
of milliseconds, and the key's frame with it. ``after_frame`` runs its work no sooner
than ``seconds`` from now and, when a frame is due by then, after that frame.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget


def after_frame(widget: Widget, seconds: float, work: Callable[[], object]) -> None:
    """``work`` on the UI thread, ``seconds`` from now, behind any frame then due. No
    timer for 0 seconds: Textual's divides by its interval once the clock has moved."""
    if seconds <= 0:
        widget.call_after_refresh(work)
    else:
        widget.set_timer(seconds, lambda: widget.call_after_refresh(work))
