"""Where the console reaches past Textual's public API: here alone, each time for a bug of
Textual, each naming the issue it waits on (``WAITS_ON``) and the test that fails once
Textual no longer needs it. ``tests/test_textual_public.py`` lets this module, and no
other, import Textual's private modules and use its private names; the guard also finds
a private part reached by a name in a string elsewhere (``getattr``, a query).

Textual's styles memo (``release_styles_memo``, ``kept_styles_entries``)
    Textual (8.2) memoises ``StylesCache.get_inner_outer`` with ``functools.lru_cache`` on
    the *instance* method: each entry's key holds a widget's ``StylesCache``, and with it
    every line that widget last drew, until 1,024 newer entries push it out. Every widget
    that comes and goes (a toast, a footer's keys recomposed, a window) leaves its lines
    behind: in the soak (``benchmarks/soak.py``) about 400 drawn lines a minute, most of
    the console's growth. The memo maps two colours to two styles, so emptying it costs a
    few recomputations on the next frame. The heap upkeep (``heap_upkeep.py``) empties it
    before its collector's pass; where a Textual release no longer memoises the method this
    way, it does nothing. Test: ``tests/tui/test_textual_workarounds.py``.

Toast holders left mounted (``sweep_toast_holders``)
    ``ToastRack.show`` takes down a toast whose notification is gone (cleared) but not the
    ``ToastHolder`` it was mounted in (a toast that times out takes its holder with it): a
    console that folds toasts all day (``toast_shelf.py``) would keep every holder mounted
    and laid out on each refresh, the soak's growing memory and CPU. The empty ones go;
    one whose toast is still on its way out goes next time. Test:
    ``tests/tui/test_toasts.py`` (folding again and again leaves no empty holder).

A partial update written from the start of its line (``crop_partial_updates``)
    A widget that repaints a region (``refresh(Region)``: the Line API's way, the
    table's ages each second, a heartbeat's cells) has Textual send the terminal that
    line from the widget's left edge to the region's right one: its ``ChopsUpdate`` cuts
    each piece of line at the span's end, never at its start. The Agents pane's ages
    (its sixth column) were 50 cells a row, 12 KB a second of an idle console's output
    and a third of its CPU in a terminal. The update is cut at both ends here, as
    Textual itself did until April 2023 (its pull request #2318; its issue #5625,
    closed, and the code's own ``TODO: crop to x extents``). Installed once as the
    console starts. Test: ``tests/tui/test_textual_workarounds.py`` (the bytes an update
    writes, and Textual's own update still writing from the line's start).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.control import Control
from textual._compositor import ChopsUpdate
from textual._styles_cache import StylesCache
from textual.screen import Screen
from textual.widgets._toast import ToastHolder

TEXTUAL_ISSUES = "https://github.com/Textualize/textual/issues/"

# Each workaround here, by the function that is it, and the Textual issue it waits on.
WAITS_ON: dict[str, str] = {
    "release_styles_memo": TEXTUAL_ISSUES + "6665",
    "kept_styles_entries": TEXTUAL_ISSUES + "6665",
    # No issue filed yet (none found in Textual's tracker): the code it works around, as of
    # Textual's main on 2026-06-30.
    "sweep_toast_holders": "https://github.com/Textualize/textual/blob/"
    "1d99508b928a771b51e1a527319c6b87dcff9e05/src/textual/widgets/_toast.py#L177-L187",
    "crop_partial_updates": TEXTUAL_ISSUES + "5625",
}
TEXTUALS_RENDER_SEGMENTS = ChopsUpdate.render_segments


def _styles_memo() -> Any:
    """Textual's per-instance memo, while it is one (an ``lru_cache``), else None."""
    memo = getattr(StylesCache, "get_inner_outer", None)
    return memo if callable(getattr(memo, "cache_clear", None)) else None


def kept_styles_entries() -> int:
    """How many widgets' styles caches the memo holds now (0 when there is none)."""
    memo = _styles_memo()
    return int(memo.cache_info().currsize) if memo is not None else 0


def release_styles_memo() -> int:
    """Let go of what the memo holds; the entries it held."""
    memo = _styles_memo()
    if memo is None:
        return 0
    held = int(memo.cache_info().currsize)
    memo.cache_clear()
    return held


def sweep_toast_holders(screen: Screen[Any]) -> int:
    """Take down the toast holders of ``screen`` left empty; how many went."""
    empty = [holder for holder in screen.query(ToastHolder) if not holder.children]
    for holder in empty:
        holder.remove()
    return len(empty)


def _render_spans(update: ChopsUpdate, console: Console) -> str:
    """What ``ChopsUpdate.render_segments`` writes, each piece of line cut to the span
    on both sides: the cells that changed, not the line up to them."""
    sequences: list[str] = []
    append = sequences.append
    last_y = update.spans[-1][0]
    for y, x1, x2 in update.spans:
        for end, (x, strip) in zip(update.chop_ends[y], update.chops[y].items(), strict=False):
            if strip is None or x >= x2 or end <= x1:
                continue
            start = max(x, x1)
            if start > x or end > x2:
                strip = strip.crop(start - x, min(end, x2) - x)
            append(Control.move_to(start, y).segment.text)
            append(strip.render(console))
        if y != last_y:
            append("\n")
    return "".join(sequences)


def crop_partial_updates() -> None:
    """Textual's partial updates written as ``_render_spans`` does (see above)."""
    # mypy: a method of Textual's class replaced by a function, on purpose.
    ChopsUpdate.render_segments = _render_spans  # type: ignore[method-assign,assignment]  # ^
