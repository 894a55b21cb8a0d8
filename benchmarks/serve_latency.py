"""runeconsole serve in a browser: key to screen (p95) and memory per browser session.

The console served to a browser (``runeconsole serve``) on loopback, in Debian's headless
Chromium driven by Playwright.

1. Key in the browser -> the screen updated, each timed from the key press in the page
   to the terminal bytes that show its effect arriving in the page (read back through a
   pyte screen, as the tests do): ``j`` and ``k`` in turn (the cursor, the one agent
   row drawn in other colours, moves down and up), then ``2`` and ``1`` in turn (the
   Problems pane, then the Agents pane: every line redrawn). p95 goal <= 100 ms.
2. Memory per open browser session: the server and every process under it (one console
   per session), RSS summed from /proc, with 0, 1, … SESSIONS pages open; the cost of a
   session is the growth divided by the sessions. The browser's own memory is the
   client's and not counted.

Usage: python benchmarks/serve_latency.py [AGENTS] [ROUNDS] [SESSIONS] [--json PATH]

``--json PATH``: the two p95 figures (``served_key_p95_ms``, ``served_pane_switch_p95_ms``)
and the load before and after, for ``benchmarks/guard.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import end_cleanly_on_sigterm, load, make_fleet, percentile, scratch, summary
from _figures import write_figures

from tests.support.browser import BrowserTerminal, chromium, session
from tests.support.served import root_args, serving

MARKS = {"2": "PROBLEM", "1": "ROLE"}  # a column header only that pane shows
WARM_UP = 4
KEYS = (  # the keys pressed in turn, what they show, and the figure's name in --json
    ("jk", "j / k (the cursor)", "served_key_p95_ms"),
    ("21", "2 / 1 (the pane)", "served_pane_switch_p95_ms"),
)


def tree_rss_mb(pid: int, count: bool = False) -> float:
    """RSS of ``pid`` and all its descendants, in MB (``count``: how many processes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo, seen = 0.0, [pid], 0
    while todo:
        current = todo.pop()
        seen += 1
        todo.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return seen if count else total


def pane_shown(terminal: BrowserTerminal) -> str:
    """``1`` or ``2``: whose column header is on screen."""
    for line in terminal.screen.display:
        for key, mark in MARKS.items():
            if mark in line:
                return key
    return ""


def cursor_line(terminal: BrowserTerminal) -> int | None:
    """The agent row drawn in a background no other agent row has: the cursor's."""
    rows = [n for n, line in enumerate(terminal.screen.display) if " w0" in line]
    backgrounds = {n: terminal.screen.buffer[n][2].bg for n in rows}
    for n, colour in backgrounds.items():
        if list(backgrounds.values()).count(colour) == 1:
            return n
    return None


def shown(terminal: BrowserTerminal, key: str, cursor_before: int | None) -> bool:
    """Whether the screen shows the effect of ``key``."""
    if key in MARKS:
        return pane_shown(terminal) == key
    return cursor_line(terminal) not in (cursor_before, None)


def key_to_screen(terminal: BrowserTerminal, keys: str, rounds: int) -> list[float]:
    """``keys`` pressed in turn; each round timed until the screen shows its effect."""
    millis = []
    for round_ in range(rounds + WARM_UP):
        key = keys[round_ % 2]
        line = cursor_line(terminal)
        began = time.monotonic()
        terminal.press(key)
        while not shown(terminal, key, line):
            if time.monotonic() > began + 10:
                raise TimeoutError(f"{key}: no effect on screen:\n{terminal.text()}")
            terminal.pump(1)
        if round_ >= WARM_UP:
            millis.append((terminal.last_frame - began) * 1000)
        terminal.pump(50)  # the screen settled before the next key
    return millis


def settle(served: object) -> None:
    """Until the server is alone again (the consoles of closed sessions have exited)."""
    pid = served.process.pid  # type: ignore[attr-defined]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and tree_rss_mb(pid, count=True) > 1:
        time.sleep(0.2)


def memory(served, browser, sessions: int) -> str:
    settle(served)
    base = tree_rss_mb(served.process.pid)
    figures = [f"server alone {base:.0f} MB"]
    import contextlib

    with contextlib.ExitStack() as stack:
        for count in range(1, sessions + 1):
            terminal = stack.enter_context(session(browser, served.link))
            terminal.wait_for("ROLE")
            terminal.pump(1500)  # its first paint done, its memory settled
            total = tree_rss_mb(served.process.pid)
            figures.append(f"{count} open {total:.0f} MB ({(total - base) / count:.0f} MB each)")
    return "memory: " + "; ".join(figures)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    for name, default in (("agents", 50), ("rounds", 100), ("sessions", 4)):
        parser.add_argument(name, type=int, nargs="?", default=default, help=f"({default})")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    end_cleanly_on_sigterm()
    figures: dict[str, float] = {}
    with scratch("serve") as tmp:
        root = tmp / "project"
        make_fleet(root, args.agents, kind="crashed")
        before = first = load()
        with serving(*root_args(root)) as served, chromium() as browser:
            with session(browser, served.link) as terminal:
                terminal.wait_for("ROLE")
                size = f"{terminal.screen.columns}x{terminal.screen.lines}"
                for keys, what, name in KEYS:
                    millis = key_to_screen(terminal, keys, args.rounds)
                    figures[name] = percentile(millis, 95)
                    label = f"key to screen, {what}, {args.agents} agents, {size}, loopback"
                    line = summary(label, millis, "<= 100 ms p95")
                    print(f"{line}  [{before} -> {load()}]", flush=True)
                    before = load()
            before = load()
            print(f"{memory(served, browser, args.sessions)}  [{before} -> {load()}]", flush=True)
    write_figures(args.json, figures, first, load())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
