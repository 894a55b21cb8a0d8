"""``runeconsole agents --json`` over 10,000 identity files, as a real process.

Usage: python benchmarks/agents_json.py [FILES] [RUNS]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import make_fleet


def main() -> int:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "fleet"
        make_fleet(root, files)
        command = [sys.executable, "-m", "runeconsole", "agents", "--json", "--root", str(root)]
        seconds = []
        for _ in range(runs):
            start = time.perf_counter()
            result = subprocess.run(command, capture_output=True, timeout=120, check=True)
            seconds.append(time.perf_counter() - start)
        rows = result.stdout.count(b'"key"')
    seconds.sort()
    print(
        f"agents --json over {files} files ({rows} rows): best {seconds[0]:.3f} s, "
        f"median {seconds[len(seconds) // 2]:.3f} s, worst {seconds[-1]:.3f} s "
        "(whole process, interpreter start included; goal <= 0.5 s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
