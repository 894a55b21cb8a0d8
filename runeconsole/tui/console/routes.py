"""Where the project console's file events go: the fleet model's directories, or the pane
that follows the directory (``FilePane.watch_dirs``), worked out once and refreshed with
the rescan, not on every event."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from runeconsole.tui.panes.pane import FilePane


class Routes:
    """Each file pane's directories, and the drained paths split by who reads them."""

    def __init__(self, fleet_dirs: set[Path]) -> None:
        self.fleet_dirs = fleet_dirs
        self._dirs: dict[FilePane[Any], set[Path]] = {}

    def learn(self, panes: Iterable[FilePane[Any]]) -> set[Path]:
        """Ask each pane once which directories it follows; every directory to watch."""
        self._dirs = {pane: set(pane.watch_dirs()) for pane in panes}
        return set(self.fleet_dirs).union(*self._dirs.values())

    def add(self, pane: FilePane[Any], directory: Path) -> None:
        self._dirs.setdefault(pane, set()).add(directory)

    def unfollowed(self, pane: FilePane[Any]) -> set[Path]:
        """The pane's directories that appeared since it was last asked."""
        return set(pane.watch_dirs()) - self._dirs.get(pane, set())

    def fleet_paths(self, by_dir: dict[Path, set[Path]]) -> list[Path]:
        return [p for d in self.fleet_dirs.intersection(by_dir) for p in by_dir[d]]

    def by_pane(self, by_dir: dict[Path, set[Path]]) -> Iterable[tuple[FilePane[Any], set[Path]]]:
        """Each pane with the paths of its directories (panes with none left out)."""
        for pane, dirs in self._dirs.items():
            mine = set().union(*(by_dir[d] for d in dirs.intersection(by_dir)))
            if mine:
                yield pane, mine


def by_directory(paths: Iterable[Path]) -> dict[Path, set[Path]]:
    """Drained paths by their directory, worked out once a drain (a path's parent is a new
    object to hash each time it is asked for)."""
    grouped: dict[Path, set[Path]] = {}
    for path in paths:
        grouped.setdefault(path.parent, set()).add(path)
    return grouped
