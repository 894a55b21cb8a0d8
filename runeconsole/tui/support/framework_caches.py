"""What Textual's shared caches keep of widgets long gone, let go of now and then.

Textual (8.2) memoises ``StylesCache.get_inner_outer`` with ``functools.lru_cache`` on
the *instance* method (Textual issue #6665, open): each entry's key holds the widget's
``StylesCache``, and with it every line that widget last drew, until 1,024 newer entries
push it out. Every widget that comes and goes (a toast, a footer's keys recomposed, a
window) leaves its styles cache and its lines behind: in the soak
(``benchmarks/soak.py``) that was about 400 drawn lines a minute, most of the console's
growth. The memo maps two colours to two styles, so emptying it costs a few
recomputations on the next frame, and the lines of the widgets gone are then freed.

``release`` is run with the heap upkeep's pass (``heap_upkeep.py``). No public call of
Textual lets go of these entries, nor of a widget's drawn lines once it is taken down, so
this one remedy names Textual's styles cache class, through the public module that uses
it (``textual.widget``), and empties the memo with ``functools``' own ``cache_clear``. It
touches no private name, and where a Textual release no longer memoises the method this
way it does nothing; ``tests/tui/test_framework_caches.py`` fails when Textual stops
keeping the lines, which says the remedy can go.
"""

from __future__ import annotations

from typing import Any

import textual.widget


def _memo() -> Any:
    """Textual's per-instance memo, while it is one (an ``lru_cache``), else None."""
    styles_cache = getattr(textual.widget, "StylesCache", None)  # a widget's, per widget
    memo = getattr(styles_cache, "get_inner_outer", None)
    return memo if callable(getattr(memo, "cache_clear", None)) else None


def kept_entries() -> int:
    """How many widgets' styles caches the memo holds now (0 when there is none)."""
    memo = _memo()
    return int(memo.cache_info().currsize) if memo is not None else 0


def release() -> int:
    """Let go of what the memo holds; the entries it held."""
    memo = _memo()
    if memo is None:
        return 0
    held = int(memo.cache_info().currsize)
    memo.cache_clear()
    return held
