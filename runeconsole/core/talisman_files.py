"""The files a talisman is read from, and how they layer.

The user's ``${CLAUDE_CONFIG_DIR:-~/.claude}/talisman.yml`` lies under the project's
``.claude/talisman.yml``: both are read, and merged key by key, the project winning
wherever both set a key (a mapping is merged into, anything else replaced). Each key
remembers the file it came from, so a bad value is reported in the file that holds it.
A file that is missing is no layer; one that cannot be read is reported and left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import read_bytes
from runeconsole.core.paths import claude_config_dir
from runeconsole.core.validate import same_path

TALISMAN = Path(".claude") / "talisman.yml"
LIMIT = 1024 * 1024
Key = tuple[str, ...]


@dataclass
class Layers:
    """The merged settings, where each key came from, and what could not be read."""

    data: dict[str, Any] = field(default_factory=dict)
    origins: dict[Key, Path] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def talisman_files(root: Path) -> list[Path]:
    """Lowest first: the user's talisman, then the project's (once, if they are one file)."""
    project = root / TALISMAN
    user = claude_config_dir() / "talisman.yml"
    if user.exists() and project.exists() and same_path(user, project):
        return [project]
    return [user, project]


def read_layers(root: Path) -> Layers:
    layers = Layers()
    for path in talisman_files(root):
        data = _read(path, layers.problems)
        if data is not None:
            _merge(layers.data, data, layers.origins, path, ())
    return layers


def _read(path: Path, problems: list[str]) -> dict[str, Any] | None:
    """One file's mapping; ``None`` when it is missing or unusable (the reason told)."""
    if not path.exists():
        return None
    import yaml  # here: a command run from a script should not pay for it with no file

    try:
        data = yaml.safe_load(read_bytes(path, limit=LIMIT).decode("utf-8")) or {}
    except UnreadableFile as exc:
        problems.append(f"{path}: {exc.reason}")
        return None
    except UnicodeDecodeError:
        problems.append(f"{path}: not UTF-8 text")
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(f"{path}: not valid YAML{where}: {problem}")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: expected a mapping at the top level")
        return None
    return data


def _merge(
    into: dict[str, Any], layer: dict[str, Any], origins: dict[Key, Path], path: Path, at: Key
) -> None:
    """``layer`` over ``into``, key by key; mappings on both sides are merged."""
    for key, value in layer.items():
        here = (*at, str(key))
        below = into.get(key)
        if isinstance(value, dict) and isinstance(below, dict):
            origins[here] = path
            _merge(below, value, origins, path, here)
            continue
        into[key] = _copy(value)
        for known in [k for k in origins if k[: len(here)] == here]:
            del origins[known]  # replaced: nothing below it comes from the lower file now
        origins[here] = path
        if isinstance(value, dict):
            _merge(into[key], value, origins, path, here)


def _copy(value: Any) -> Any:
    """Mappings are copied (a later layer merges into them); anything else is shared."""
    return {k: _copy(v) for k, v in value.items()} if isinstance(value, dict) else value


def origin(origins: dict[Key, Path], names: Key, default: Path) -> Path:
    """The file that set ``names`` (or the nearest mapping holding it)."""
    for length in range(len(names), 0, -1):
        found = origins.get(names[:length])
        if found is not None:
            return found
    return default
