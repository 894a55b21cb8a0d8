"""The review screen, key to screen, in a real tmux pane: ``d`` on an agent -> its diff
painted; ``n`` -> the next file at the top; ``page down`` -> the diff moved a page; and
``d`` on an agent whose one file is 20,000 new lines -> its first lines painted.

The project has two agents in worktrees of their own: ``worker-big`` with a change of
``--files`` files and ``--lines`` changed lines in all (every other line of each file
rewritten: as many hunks as a real refactor), committed on its branch, plus an
untracked note; ``worker-huge`` with one new file of ``--huge`` lines. The console runs
in a 160x45 pane of a private tmux server (``--no-monitor``) and the screen is read back
through one tmux control-mode client about every millisecond (``_console.py``), so a
figure is from handing tmux the key to the capture that showed its effect. Beside each,
the CPU the console spent meanwhile (its threads and the git processes it ran, from
``/proc``): what others' load on a shared machine distorts least.

Each round opens ``worker-big``'s review twice: ``cold`` after its note was changed (the
changes and the patch are worked out again with git) and ``warm`` (nothing moved: git
is asked only whether anything did); in between it presses ``n`` and ``page down``
``--steps`` times each. Then ``worker-huge``'s review, cold.

Goals (issue 21): 50 files, 5,000 lines: key to first paint p95 <= 150 ms; ``n`` and
page down p95 <= 50 ms; a 20,000-line single-file diff opens in <= 300 ms.

    python benchmarks/review_screen.py [--rounds 10] [--steps 5] [--files 50]
        [--lines 5000] [--huge 20000] [--py-spy DIR] [--json PATH]

``--py-spy DIR``: a py-spy profile of the console over the rounds, ``DIR/review.txt``
(summarise it with ``benchmarks/stacks.py``; it slows the console a little).
``--json PATH``: the figures (``review_after_change_p95_ms`` …, each key's p95) and the
load before and after, for ``benchmarks/guard.py``. The console's first review loads what
the later ones find loaded: it is ``review_first_open_ms``, and the after-change p95 is
that of the later cold openings.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm, load, percentile, process_cpu, scratch, summary
from _console import ConsolePane
from _figures import write_figures
from _worktrees import agent, code, project, touch

TIMEOUT = 30.0
FIGURES = {  # --json: each key's p95, by the name the guard reads
    "open cold": "review_after_change_p95_ms",
    "open warm": "review_nothing_moved_p95_ms",
    "n": "review_next_file_p95_ms",
    "page down": "review_page_down_p95_ms",
    "20,000-line file": "review_huge_file_p95_ms",
}
JSON_HELP = "write the figures (each key's p95) and the load to PATH as JSON"


def diff_part(line: str) -> str:
    """The diff's part of a screen line (right of the file list's edge, when shown)."""
    return line.rsplit("▕", 1)[-1]


def row_name(styled: str) -> str:
    """The agent named on an Agents row of a styled capture (``""``: not an agent's row)."""
    words = re.sub(r"\x1b\[[0-9;]*m", "", styled).split()
    return words[words.index("worker") + 1] if "worker" in words[:-1] else ""


def background(styled: str) -> str:
    """The background a styled line's text has where its agent's role begins."""
    codes = re.findall(r"48;5;\d+", styled[: styled.find("worker ")])
    return codes[-1] if codes else ""


class Rounds:
    def __init__(self, pane: ConsolePane, note: Path, huge_note: Path, files: int) -> None:
        self.pane, self.note, self.huge_note, self.files = pane, note, huge_note, files
        self.times: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}  # CPU the console spent meanwhile
        self.rng = random.Random(7)
        # The cursor's background: the first row's, as the console starts.
        self.cursor = next(
            background(line) for line in pane.capture(styles=True)[3:10] if row_name(line) == "big"
        )

    def press(self, label: str, key: str, shown) -> None:  # type: ignore[no-untyped-def]
        time.sleep(self.rng.uniform(0.15, 0.4))
        pid = self.pane.pid
        assert pid is not None
        cpu = process_cpu(pid, children=True)
        sent = self.pane.send_keys(key)
        seen = self.pane.wait_for(shown, timeout=TIMEOUT, what=f"the effect of {label}")
        self.times.setdefault(label, []).append((seen - sent) * 1000)
        spent = process_cpu(pid, children=True) - cpu  # the console's, and git's it ran
        self.cpu.setdefault(label, []).append(spent * 1000)

    def cursor_on(self, name: str) -> None:
        """Until the agents' cursor is on ``worker-NAME``'s row, told by its background
        (a key sent as the pane comes back must not be lost to the next round)."""

        def there(lines: list[str]) -> bool:
            rows = {row_name(line): background(line) for line in lines[3:10]}
            return rows.get(name) == self.cursor and list(rows.values()).count(self.cursor) == 1

        self.pane.wait_for(there, timeout=TIMEOUT, styles=True, what=f"the cursor on {name}")

    def back(self) -> None:
        self.pane.send_keys("Escape")
        self.pane.wait_for(lambda s: "ROLE" in "".join(s[:6]), timeout=TIMEOUT)

    def open(self, label: str, key_name: str, first_line: str) -> None:
        def painted(lines: list[str]) -> bool:
            return lines[0].lstrip().startswith(f"Review {key_name}") and any(
                first_line in line for line in lines
            )

        self.press(label, "d", painted)

    def round(self, steps: int) -> None:
        touch(self.note)
        self.open("open cold", "worker-big", "value_0_1 = compute(1")
        for index in range(min(steps, self.files)):
            header = f"src/mod{index:02d}.py  +"
            self.press("n", "n", lambda s, h=header: h in diff_part(s[1]))
        for _ in range(steps):
            top = diff_part(self.pane.capture()[1])
            self.press("page down", "PageDown", lambda s, t=top: diff_part(s[1]) != t)
        self.back()
        self.open("open warm", "worker-big", "value_0_1 = compute(1")
        self.back()
        self.pane.send_keys("j")  # worker-huge
        self.cursor_on("huge")
        touch(self.huge_note)
        self.open("20,000-line file", "worker-huge", "value_0_0 = 0 * 0")
        self.back()
        self.pane.send_keys("k")
        self.cursor_on("big")


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=5, help="n and page downs per round")
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--lines", type=int, default=5000, help="changed lines in all")
    parser.add_argument("--huge", type=int, default=20_000, help="lines of the one big file")
    parser.add_argument("--py-spy", type=Path, default=None, metavar="DIR")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help=JSON_HELP)
    args = parser.parse_args()
    per_file = max(2, args.lines // args.files)  # half of them removed, half added
    with scratch("review") as base:
        root = base / "project"
        modules = {f"src/mod{m:02d}.py": code(m, per_file) for m in range(args.files)}
        registry = project(root, modules)
        changed = {name: code(m, per_file, changed=True) for m, name in enumerate(modules)}
        big = agent(registry, "big", changed, {"work-notes.md": "notes\n"})  # last: w > s
        huge = agent(registry, "huge", {"data/huge.py": code(0, args.huge)}, {"N.md": "n\n"})
        with ConsolePane(root, monitor=False, size=(160, 45)) as pane:
            pane.start_console()
            pane.wait_for(lambda s: "ready 2" in s[0], timeout=60, what="both agents ready")
            time.sleep(2)
            before = load()
            rounds = Rounds(pane, big / "work-notes.md", huge / "N.md", args.files)
            if args.py_spy is not None:
                args.py_spy.mkdir(parents=True, exist_ok=True)
                pane.py_spy(args.py_spy / "review.txt", 3600, rate=250)  # stopped below
                time.sleep(1)  # attached
            for _ in range(args.rounds):
                rounds.round(args.steps)
            pane.stop_profilers()
            after = load()
    print(
        f"review of {args.files} files, {per_file * args.files} changed lines "
        f"({per_file // 2} added and {per_file // 2} removed per file, every other line) "
        f"and of one {args.huge}-line file; 160x45 tmux pane; {before} -> {after}"
    )
    goals = {
        "open cold": "p95 <= 150 ms",
        "open warm": "p95 <= 150 ms",
        "n": "p95 <= 50 ms",
        "page down": "p95 <= 50 ms",
        "20,000-line file": "<= 300 ms",
    }
    for label, goal in goals.items():
        print(summary(f"  {label} -> screen", rounds.times[label], goal))
        cpu = rounds.cpu[label]
        print(
            f"      console CPU meanwhile (its own and git's, 10 ms ticks): p50 "
            f"{percentile(cpu, 50):.0f} ms, p95 {percentile(cpu, 95):.0f} ms"
        )
    # The console's first review also loads what every later one finds loaded (the
    # review's modules, a lexer): a figure of its own, and the after-change p95 is the
    # later ones' (the first is one of n, and at five rounds a p95 is the worst).
    first, *later = rounds.times["open cold"]
    print(f"  the console's first review (cold): {first:.1f} ms; the later ones' p95 below")
    figures = {name: percentile(rounds.times[label], 95) for label, name in FIGURES.items()}
    figures |= {  # the medians: what the guard judges a change by (a p95 of five is the worst)
        name.replace("_p95_", "_p50_"): percentile(rounds.times[label], 50)
        for label, name in FIGURES.items()
    }
    figures["review_after_change_p95_ms"] = percentile(later or [first], 95)
    figures["review_after_change_p50_ms"] = percentile(later or [first], 50)
    figures["review_first_open_ms"] = first
    write_figures(args.json, figures, before, after)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
