"""What the console's table (``KeyedTable``) costs at N rows, each operation alone.

A headless app holding one ``KeyedTable`` with the Agents pane's columns and rows built
by the pane's own ``row_values``; each operation is timed on the thread CPU clock, and
apart from it what follows before the screen shows it (the frame: ``pilot.pause``).
RSS growth from the empty table to N rows is printed too.

    python benchmarks/table_cost.py [ROWS ...]

Operations: fill (``upsert`` per row, then sort), the same rows in bulk (``replace``),
one cell updated, one row added, one row removed, 100 removed in one go and added again,
cursor down, page down, the rows matching ``7`` shown instead (a filter), and a
projection of the same filter done row by row from the cost of a removal in a batch.
(Until issue 24 the table was Textual's DataTable: ``git log`` this file for its figures.)
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm, numbers, process_memory
from textual.app import App, ComposeResult

from runeconsole.core.timeutil import iso_z
from runeconsole.services.registry import AgentRecord, LivenessSettings
from runeconsole.services.supervision.service import SupervisorSettings
from runeconsole.tui.cells.agent_cells import COLUMNS, row_values
from runeconsole.tui.widgets.keyed_table import KeyedTable


def records(count: int) -> list[AgentRecord]:
    now = datetime.now(UTC)
    stamp = iso_z(now)
    made = []
    for n in range(count):
        key = f"worker-w{n:05d}"
        fields = {
            "agent_id": f"{key}-20260226T120000Z",
            "role": "worker",
            "name": f"w{n:05d}",
            "status": "active",
            "last_heartbeat": stamp,
            "node_id": f"node{n % 37}",
        }
        record = AgentRecord(key, f"/x/{key}.json", fields)
        record.rejudge(now, LivenessSettings())
        made.append(record)
    return made


class Holder(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS)


async def measure(count: int) -> list[str]:
    rows = records(count)
    settings = SupervisorSettings()
    values = {r.key: row_values(r, None, None, settings) for r in rows}
    app = Holder()
    lines = []
    async with app.run_test(size=(160, 45)) as pilot:
        table = app.query_one(KeyedTable)
        table.focus()
        await pilot.pause()
        empty = process_memory(os.getpid())["rss"]

        async def timed(label: str, operation: Callable[[], object]) -> float:
            """The operation's own ms; then the frame, apart."""
            start = time.thread_time()
            operation()
            own = (time.thread_time() - start) * 1000
            start = time.thread_time()
            await pilot.pause()
            after = (time.thread_time() - start) * 1000
            lines.append(f"  {label:<44} {own:9.1f} ms  + {after:7.1f} ms to the frame")
            return own

        def fill() -> None:
            for key, row in values.items():
                table.upsert(key, row)
            table.reorder("role", "name", key=lambda cells: (str(cells[0]), str(cells[1])))

        await timed(f"fill {count} rows (upsert each, sort)", fill)
        full = process_memory(os.getpid())["rss"]
        bulk = list(values.items())
        await timed(f"the {count} rows again in bulk (replace)", lambda: table.replace(bulk))
        # The first change after the fill repaints every line (the caches are warming): untimed.
        table.upsert(rows[1].key, [*values[rows[1].key][:8], "warm", *values[rows[1].key][9:]])
        await pilot.pause()
        for where, row in (("off screen", rows[count // 2]), ("on screen", rows[2])):
            changed = [*values[row.key][:8], "moved", *values[row.key][9:]]
            await timed(
                f"one cell updated, {where}", lambda r=row, c=changed: table.upsert(r.key, c)
            )
        extra = records(count + 1)[-1]
        extra_values = row_values(extra, None, None, settings)
        await timed("one row added", lambda: table.upsert(extra.key, extra_values))
        await timed("one row removed", lambda: table.drop(extra.key))
        some = [row.key for row in rows[:100]]
        removal = await timed(
            "100 rows removed in one go", lambda: [table.drop(key) for key in some]
        ) / len(some)
        await timed("the 100 rows added again", lambda: [table.upsert(k, values[k]) for k in some])
        await timed("cursor down", table.action_cursor_down)
        await timed("page down", table.action_page_down)
        table.reorder("role", "name", key=lambda cells: (str(cells[0]), str(cells[1])))
        kept = {k: v for k, v in values.items() if "7" in k}

        await timed(
            f"the {len(kept)} rows matching '7' instead (replace)",
            lambda: table.replace(list(kept.items())),
        )
        dropped = count - len(kept)
        lines.append(
            f"  {'filter row by row (projected)':<40} {dropped * removal:9.0f} ms  "
            f"({dropped} removals x {removal:.2f} ms)"
        )
        lines.insert(0, f"{count} rows: RSS {empty:.0f} MB empty, {full:.0f} MB filled")
    return lines


def main() -> int:
    end_cleanly_on_sigterm()
    sizes = numbers(__doc__, agents=[10_000]).agents
    for count in sizes:
        print("\n".join(asyncio.run(measure(count))), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
