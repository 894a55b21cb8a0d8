"""``scripts/snapshot_cells.py`` tells a snapshot that looks different from one that is
only written differently (the check behind re-approving the table's snapshots)."""

from __future__ import annotations

import importlib.util

from tests.support.paths import REPO

spec = importlib.util.spec_from_file_location("snapshot_cells", REPO / "scripts/snapshot_cells.py")
assert spec is not None and spec.loader is not None
snapshot_cells = importlib.util.module_from_spec(spec)
spec.loader.exec_module(snapshot_cells)


def svg(*texts: tuple[str, float, str], background: str = "#121212") -> str:
    """A one-line screenshot as Rich exports it: runs of text at cell offsets."""
    styles = ".terminal-r1 { fill: #e0e0e0 }\n.terminal-r2 { fill: #4a4a4a;font-weight: bold }"
    rect = f'<rect fill="{background}" x="0" y="1.5" width="61" height="24.65"/>'
    runs = "".join(
        f'<text class="terminal-{style}" x="{12.2 * column}" y="20" textLength="1" '
        f'clip-path="url(#terminal-line-0)">{text}</text>'
        for text, column, style in texts
    )
    return f"<style>{styles}</style>{rect}{runs}"


def test_a_blank_run_written_apart_looks_the_same_and_a_changed_cell_does_not() -> None:
    whole = svg(("ab&#160;&#160;&#160;", 0, "r1"))
    assert snapshot_cells.differences(whole, whole) == []
    apart = svg(("ab", 0, "r1"), ("&#160;&#160;&#160;", 2, "r2"))  # blanks: no colour shown
    assert snapshot_cells.differences(whole, apart) == []
    assert snapshot_cells.differences(whole, svg(("ax&#160;&#160;&#160;", 0, "r1")))
    assert snapshot_cells.differences(whole, svg(("ab&#160;&#160;&#160;", 0, "r2")))
    assert snapshot_cells.differences(whole, svg(("ab", 0, "r1"), background="#0178d4"))
