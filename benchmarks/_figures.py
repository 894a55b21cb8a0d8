"""``--json PATH`` of the benchmarks the guard runs: the figures of one run and the load
before and after it, as one JSON object ``{"figures": {...}, "load": [before, after]}``
(the load as ``_common.load()`` words it)."""

from __future__ import annotations

import json
from pathlib import Path


def write_figures(path: Path | None, figures: dict[str, float], before: str, after: str) -> None:
    """Write ``figures`` (name -> value) and the load to ``path`` (nothing when None)."""
    if path is None:
        return
    body = {"figures": {name: round(value, 3) for name, value in figures.items()}}
    body["load"] = [before, after]  # type: ignore[assignment]
    path.write_text(json.dumps(body, indent=2) + "\n")
