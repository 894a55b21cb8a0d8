"""Hooks under load: 100 Claude Code sessions' events at a fleet's pace, through the real
hook, while a console is open and the soak's other work runs (the operator answering, the
merge queue processing).

About 20 hook processes a second in all (``--rate``), for ``--minutes`` (3). Goals: p95
of a hook process (start -> exit, the events that answer nothing: what Claude Code waits
for on every tool call) <= 100 ms; no lost update (every agent's last_seen and activity
are its last event's afterwards); no lock timeout (none in hook.log). Everything else the
soak checks is checked and printed too.

    python benchmarks/hook_load.py [--agents 100] [--rate 20] [--minutes 3]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm
from soak import parser, run


def main() -> int:
    end_cleanly_on_sigterm()
    args = parser(__doc__.splitlines()[0], agents=100, minutes=3).parse_args()
    if args.warmup is None:
        args.warmup = 0.5
    args.p95_goal = args.p95_goal or 100.0
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
