"""A key in the Agents pane with N rows -> the screen shows its effect, in a real tmux pane.

The console runs in a 160x45 pane of a private tmux server; keys are sent with
``send-keys`` and the screen is read back through one tmux control-mode client (a
capture costs the tmux server a fraction of a millisecond and the console nothing),
about every millisecond, until it shows what the key does:

Each round:

- ``j``: the cursor (the one row drawn in the cursor's colours, read with the styles of
  ``capture-pane -e``) is on the next agent;
- ``pagedown``: the cursor row shows another agent;
- ``ctrl+home``: the cursor is on the first agent, the first two rows are the fleet's;
- ``/``: the filter box is open;
- one character (a digit 1-9, none of which is in the first agent's row): the first two
  rows are the first two agents that match it (worked out with the pane's own
  ``search_fields`` and ``search_text``), i.e. the table is filtered;
- ``escape``: the filter is cleared, the first two rows are the fleet's first two again;
- a pane switch: ``2`` (the Problems pane's header is drawn), then ``1`` (the Agents
  pane's);
- ``enter``: the cursor row's agent detail is open (its key, ``worker-w…``, which no row
  shows, is drawn); ``escape`` closes it.

Latency is from handing tmux the key to the capture that showed the effect (an upper
bound, by at most one poll). Keys are spaced by a random 150-400 ms, so they fall at
every phase of the console's one-second tick.

Goal (issue 12): 10,000 rows, p95 <= 50 ms (j, page down, the filter's character).
A key that takes longer than ``--timeout`` ends the run with what was measured so far
(on main the filter at 10,000 rows takes minutes: ``--no-filter`` leaves it out).
``--py-spy DIR`` records the console's stacks over all the rounds into
``DIR/keys-N-monitor|no-monitor.txt``.

    python benchmarks/key_latency.py [AGENTS ...] [--rounds 20] [--monitor both|on|off]
        [--timeout 120] [--no-filter] [--py-spy DIR]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    end_cleanly_on_sigterm,
    figure,
    fleet_parser,
    load,
    percentile,
    run_each,
    summary,
)
from _console import ConsolePane, PaneError, console_on_fleet

from runeconsole.services.project import Project
from runeconsole.services.registry import AgentRecord, Registry
from runeconsole.tui.cells.agent_cells import search_fields
from runeconsole.tui.panes.pane import search_text

PROBLEMS, AGENTS = "PROBLEM", "ROLE"  # a column header only that pane shows
BACKGROUND = re.compile(r"\x1b\[[0-9;]*48;5;(\d+)")
NAME = re.compile(r"w\d{5}")


def rows(lines: list[str]) -> list[str]:
    """The names on the table's rows on screen, top first."""
    return [found.group() for line in lines if (found := NAME.search(line))]


def top_rows(lines: list[str]) -> list[str]:
    """The names of the first two rows (the cursor is on the first, moved to the top)."""
    return rows(lines)[:2]


def cursor_row(styled: list[str]) -> str | None:
    """The name on the row drawn in a background no other row has: the cursor's."""
    rows = [(BACKGROUND.findall(line), NAME.search(line)) for line in styled]
    rows = [(tuple(bgs[:1]), name.group()) for bgs, name in rows if name and bgs]
    usual = Counter(bg for bg, _ in rows).most_common(1)
    odd = [name for bg, name in rows if usual and bg != usual[0][0]]
    return odd[0] if len(odd) == 1 else None


class Keys:
    def __init__(
        self, pane: ConsolePane, records: list[AgentRecord], timeout: float, filtering: bool
    ) -> None:
        self.pane = pane
        self.filtering = filtering
        self.names = [str(record.get("name")) for record in records]  # in the table's order
        self.matching = {
            char: [str(r.get("name")) for r in records if char in search_text(search_fields(r))]
            for char in "123456789"
        }
        self.timeout = timeout
        self.rng = random.Random(7)
        self.times: dict[str, list[float]] = {}

    def press(
        self, label: str, key: str, shown: Callable[[list[str]], bool], styles: bool = False
    ) -> None:
        time.sleep(self.rng.uniform(0.15, 0.4))
        sent = self.pane.send_keys(key)
        times = self.times.setdefault(label, [])
        try:
            seen = self.pane.wait_for(
                shown, timeout=self.timeout, styles=styles, what=f"the effect of {label}"
            )
        except PaneError:
            times.append(float("inf"))
            raise
        times.append((seen - sent) * 1000)

    def round(self, n: int) -> None:
        names = self.names
        self.pane.wait_for(lambda s: cursor_row(s) is not None, timeout=self.timeout, styles=True)
        following = names[names.index(cursor_row(self.pane.capture(styles=True))) + 1]
        self.press("j", "j", lambda s: cursor_row(s) == following, styles=True)
        moved = lambda s: cursor_row(s) not in (None, following)  # noqa: E731
        self.press("pagedown", "PageDown", moved, styles=True)
        at_top = lambda s: top_rows(s) == names[:2] and cursor_row(s) == names[0]  # noqa: E731
        self.press("ctrl+home", "C-Home", at_top, styles=True)
        if not self.filtering:
            return
        self.press("/", "/", lambda s: any("filter…" in line for line in s))
        char = str(1 + n % 9)  # no digit but 0 is in w00000's row: the first row changes
        self.press("filter", char, lambda s: top_rows(s) == self.matching[char][:2])
        self.press("escape", "Escape", lambda s: top_rows(s) == names[:2])
        self.press("pane switch", "2", lambda s: any(PROBLEMS in line for line in s))
        self.press("pane switch", "1", lambda s: any(AGENTS in line for line in s))
        self.pane.wait_for(lambda s: cursor_row(s) is not None, timeout=self.timeout, styles=True)
        name = cursor_row(self.pane.capture(styles=True))
        self.press("enter", "Enter", lambda s: any(f"worker-{name}" in line for line in s))
        self.press("close", "Escape", lambda s: not any(f"worker-{name}" in line for line in s))


def one_run(agents: int, monitor: bool, args: argparse.Namespace) -> str:
    with console_on_fleet(agents, monitor=monitor, everything=not args.plain) as started:
        pane = started.pane
        records = Registry(Project(started.root)).list()
        time.sleep(5)  # past the start-up tail (the monitor's first pass)
        before = load()
        if args.py_spy is not None:
            label = "monitor" if monitor else "no-monitor"
            output = args.py_spy / f"keys-{agents}-{label}.txt"
            pane.py_spy(output, 3600)  # stopped after the rounds
        keys = Keys(pane, records, args.timeout, filtering=not args.no_filter)
        try:
            for n in range(args.rounds):
                keys.round(n)
        except PaneError as exc:  # a key took longer than --timeout: report what we have
            print(f"stopped: {exc}", file=sys.stderr)
        pane.stop_profilers()
        after = load()
    label = "monitor on " if monitor else "--no-monitor"
    lines = []
    for key, what, goal in (
        ("j", "key j", "p95 <= 50 ms"),
        ("pagedown", "key pagedown", "p95 <= 50 ms"),
        ("ctrl+home", "key ctrl+home (to the top)", "-"),
        ("/", "key / (filter box open)", "-"),
        ("filter", "filter of one character", "p95 <= 50 ms"),
        ("escape", "escape (filter cleared)", "-"),
        ("pane switch", "pane switch (2, then 1)", "p95 <= 50 ms"),
        ("enter", "enter (the agent's detail open)", "p95 <= 50 ms"),
        ("close", "escape (the detail closed)", "-"),
    ):
        if keys.times.get(key):
            lines.append(
                summary(f"{agents:>6} agents, {label}: {what} -> screen", keys.times[key], goal)
            )
            name = "key_" + key.replace("+", "_").replace(" ", "_").replace("/", "slash")
            times = keys.times[key]
            args.figures[figure(name, agents, monitor, "p95_ms")] = percentile(times, 95)
            args.figures[figure(name, agents, monitor, "p50_ms")] = percentile(times, 50)
    lines.append(f"{'':>6} {before} -> {after}")
    return "\n".join(lines)


def main() -> int:
    end_cleanly_on_sigterm()
    parser = fleet_parser(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=120.0, help="longest wait for a key")
    parser.add_argument("--no-filter", action="store_true", help="j, pagedown, ctrl+home only")
    return run_each(parser.parse_args(), one_run)


if __name__ == "__main__":
    raise SystemExit(main())
