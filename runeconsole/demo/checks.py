"""The demo project's test command (``merge_queue.test_command``): every ``test_*`` function
of ``tests/test_*.py`` in the working directory (a worktree, or the merge queue's checkout
of a batch), run and reported as pytest does, so ``task test`` and the merge queue judge
each attempt by its own tests: exit 0 when all pass, 1 when one fails.

A real suite takes a moment: the run lasts at least ``PACE`` seconds, so the merge queue's
test step shows in the console.

    python -m runeconsole.demo.checks
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

PACE = 2.0


def collect(root: Path) -> list[tuple[str, Callable[[], object] | None, str | None]]:
    """``(test id, function, None)`` for each test, ``(file, None, error)`` for a file that
    would not import."""
    found: list[tuple[str, Callable[[], object] | None, str | None]] = []
    for path in sorted((root / "tests").glob("test_*.py")):
        relative = path.relative_to(root).as_posix()
        spec = importlib.util.spec_from_file_location(f"demo_checks_{path.stem}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a test file that fails to import is a failure
            found.append((relative, None, f"{type(exc).__name__}: {exc}"))
            continue
        for name, value in vars(module).items():
            if name.startswith("test_") and callable(value):
                found.append((f"{relative}::{name}", value, None))
    return found


def failure(exc: BaseException) -> str:
    """What failed: the assertion's line as written, or the exception."""
    frames = traceback.extract_tb(exc.__traceback__)
    line = frames[-1].line if frames else None
    if isinstance(exc, AssertionError) and line:
        return f"{line}{f' ({exc})' if str(exc) else ''}"
    return f"{type(exc).__name__}: {exc}"


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    root = Path.cwd()
    sys.dont_write_bytecode = True  # nothing left in the worktree: it stays removable
    sys.path.insert(0, str(root))  # ``from src.x import y``, as pytest's rootdir does
    print("collecting tests", flush=True)
    passed, failed = 0, []
    for test_id, function, error in collect(root):
        if function is None:
            failed.append(f"ERROR {test_id} - {error}")
            print(f"{test_id} ERROR", flush=True)
            continue
        try:
            function()
        except Exception as exc:  # any exception fails the test
            failed.append(f"FAILED {test_id} - {failure(exc)}")
            print(f"{test_id} FAILED", flush=True)
        else:
            passed += 1
            print(f"{test_id} PASSED", flush=True)
    time.sleep(max(0.0, PACE - (time.monotonic() - started)))
    for line in failed:
        print(line)
    counts = [f"{len(failed)} failed"] if failed else []
    counts += [f"{passed} passed"] if passed else []
    print(f"{', '.join(counts) or 'no tests ran'} in {time.monotonic() - started:.2f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
