"""The fleet console's scene (screenshots and snapshot tests): the demo scene's root,
a second root with a merge queue and suspended tasks, and a source whose root is not
there, each under ``base``, on manual clocks so the pictures change only when the
console does."""

from __future__ import annotations

import shutil
from pathlib import Path

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.demo.merge_queue import build_queue
from runeconsole.demo.scene import build_scene
from runeconsole.demo.suspended import build_scene as build_suspended


def build_fleet_scene(base: Path) -> tuple[list[SourceSpec], ManualClock]:
    """The sources and the console's clock (the first root's)."""
    roots = {name: base / name for name in ("shop", "work")}
    for root in roots.values():
        if root.exists():
            shutil.rmtree(root)
        git.init_repo(root)
    clock = ManualClock()
    build_scene(roots["shop"], clock)
    other = ManualClock()  # its own: building this root moves its clock on, not the console's
    build_queue(roots["work"], other)
    build_suspended(roots["work"], other)
    specs = [SourceSpec(name, str(root)) for name, root in roots.items()]
    return [*specs, SourceSpec("ml", str(base / "ml-not-cloned"))], clock
