"""Per-model tables: dollars per million tokens, and the context window in tokens.

The defaults are what Claude Code 2.1.328 reports for its models (its status line's
``cost.total_cost_usd`` and ``context_window.context_window_size``, measured against the
Messages API stand-in) and the published prices of the models before them. The talisman
adds to them or replaces an entry:

```yaml
runeconsole:
  claude:
    prices:              # dollars per million tokens
      claude-opus-5-5: {input: 4, output: 20, cache_write: 5, cache_read: 0.2}
    context_windows:     # tokens
      claude-opus-5-5: 1000000
```

A model is found by its exact id, else by the longest entry its id starts with
(``claude-sonnet-4-5-20250929`` is ``claude-sonnet-4-5``); ``…[1m]`` asks for the
million-token window. A price an estimate cannot find uses the ``default`` entry.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

PER = 1_000_000
KINDS = ("input", "output", "cache_write", "cache_read")
# The transcript's token counts (adapters.transcript) by the price that applies to each.
TOKEN_KINDS = {
    "input": "input",
    "output": "output",
    "cache_creation": "cache_write",
    "cache_read": "cache_read",
}
DEFAULT = "default"
MILLION_SUFFIX = "[1m]"

PRICES: dict[str, dict[str, float]] = {
    # measured: Claude Code 2.1.328's own cost for its default and Sonnet models
    "claude-opus-5-5": {"input": 4.0, "output": 20.0, "cache_write": 5.0, "cache_read": 0.2},
    "claude-sonnet-5-5": {"input": 2.0, "output": 10.0, "cache_write": 2.5, "cache_read": 0.1},
    # published
    "claude-opus-4-5": {"input": 5.0, "output": 25.0, "cache_write": 6.25, "cache_read": 0.5},
    "claude-opus-4-1": {"input": 15.0, "output": 75.0, "cache_write": 18.75, "cache_read": 1.5},
    "claude-opus-4": {"input": 15.0, "output": 75.0, "cache_write": 18.75, "cache_read": 1.5},
    "claude-sonnet-4-5": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3},
    "claude-sonnet-4": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3},
    "claude-haiku-4-5": {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_read": 0.1},
    "claude-3-5-haiku": {"input": 0.8, "output": 4.0, "cache_write": 1.0, "cache_read": 0.08},
}
PRICES[DEFAULT] = PRICES["claude-opus-5-5"]  # Claude Code's default model

WINDOWS: dict[str, int] = {
    "claude-opus-5-5": 1_000_000,  # measured, as its status line reports it
    "claude-sonnet-5-5": 1_000_000,
    "claude-opus-4-5": 200_000,
    "claude-opus-4-1": 200_000,
    "claude-opus-4": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-3-5-haiku": 200_000,
}


def find(table: dict[str, Any], model: str | None) -> Any:
    """``table``'s entry for ``model``: exact, else the longest key it starts with."""
    if not model:
        return None
    model = model.strip().lower()
    if model.endswith(MILLION_SUFFIX):
        model = model[: -len(MILLION_SUFFIX)]
    if model in table:
        return table[model]
    starts = [key for key in table if key != DEFAULT and model.startswith(key)]
    return table[max(starts, key=len)] if starts else None


def window(model: str | None, overrides: dict[str, int] | None = None) -> int | None:
    """The context window of ``model`` in tokens (``None``: not known)."""
    if model and model.strip().lower().endswith(MILLION_SUFFIX):
        return 1_000_000
    found = find({**WINDOWS, **(overrides or {})}, model)
    return found if isinstance(found, int) else None


def price(
    model: str | None, overrides: dict[str, dict[str, float]] | None = None
) -> dict[str, float]:
    """Dollars per million tokens of each kind for ``model`` (the default's when unknown)."""
    table = {**PRICES, **(overrides or {})}
    return find(table, model) or table[DEFAULT]


def estimate(tokens: dict[str, int], rates: dict[str, float]) -> float:
    """Dollars for the transcript's token counts (``input``, ``output``, ``cache_read``,
    ``cache_creation``) at ``rates``."""
    total = 0.0
    for name, kind in TOKEN_KINDS.items():
        count = tokens.get(name)
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            total += count * float(rates.get(kind) or 0.0) / PER
    return total


def checked_prices(value: object) -> tuple[dict[str, dict[str, float]], list[str]]:
    """A talisman's ``prices`` mapping, checked: the good entries and what was wrong."""
    good: dict[str, dict[str, float]] = {}
    wrong: list[str] = []
    for model, rates in value.items() if isinstance(value, dict) else []:
        ok = isinstance(model, str) and isinstance(rates, dict) and set(rates) <= set(KINDS)
        ok = ok and all(_amount(rates.get(kind, 0)) for kind in KINDS)
        if ok:
            good[model.lower()] = {kind: float(rates.get(kind, 0)) for kind in KINDS}
        else:
            wrong.append(f"{model}: {rates!r}")
    if value is not None and not isinstance(value, dict):
        wrong.append(repr(value))
    return good, wrong


def checked_windows(value: object) -> tuple[dict[str, int], list[str]]:
    """A talisman's ``context_windows`` mapping, checked."""
    good: dict[str, int] = {}
    wrong: list[str] = []
    for model, tokens in value.items() if isinstance(value, dict) else []:
        if (
            isinstance(model, str)
            and isinstance(tokens, int)
            and not isinstance(tokens, bool)
            and tokens >= 1000
        ):
            good[model.lower()] = tokens
        else:
            wrong.append(f"{model}: {tokens!r}")
    if value is not None and not isinstance(value, dict):
        wrong.append(repr(value))
    return good, wrong


def _amount(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 <= value < 1e6
        and value == value
    )
