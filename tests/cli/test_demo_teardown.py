"""The demo's teardown, run by the main thread and by the grace timer after a closed
terminal: whichever comes second waits for the first, so the demo never ends with its
project half removed (seen under load: the timer ended the process mid-teardown)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from runeconsole.cli.demo import Teardown


class SlowConsole:
    """A console whose monitor takes a moment to stop, as on a loaded machine."""

    def stop_monitor(self, timeout: float) -> None:
        time.sleep(0.5)


def test_a_second_teardown_returns_only_once_the_project_is_removed(tmp_path: Path) -> None:
    remove = tmp_path / "runeconsole-demo-x"
    (remove / "project").mkdir(parents=True)
    teardown = Teardown(remove / "project", "none", keep=False, remove=remove, tmux=False)
    teardown.console = SlowConsole()  # type: ignore[assignment]
    first = threading.Thread(target=teardown)
    first.start()
    time.sleep(0.1)  # the first is inside, stopping the monitor

    teardown()  # the grace timer's, which ends the process straight after

    assert not remove.exists()
    first.join(5)
    assert not first.is_alive()


def test_teardown_twice_removes_once_and_keeps_a_kept_project(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    teardown = Teardown(kept, "none", keep=True, remove=kept, tmux=False)
    teardown()
    teardown()
    assert kept.is_dir()
