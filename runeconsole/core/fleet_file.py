"""The fleet file: which project roots one console opens, and on which hosts.

``~/.config/runeconsole/fleet.yml`` (or ``--fleet FILE``) lists sources::

    sources:
      - name: api              # this machine (no host)
        root: ~/src/api
      - name: build1
        host: build1.example   # anything ssh accepts, an alias of ~/.ssh/config included
        root: /srv/work/web
        command: runeconsole   # the remote runeconsole (a word or a list of words)
        ssh: [ssh, -F, ~/work/ssh_config]   # the client's argv prefix

A bare list of sources is accepted too. The file is read with ``yaml.safe_load`` and
every field is checked before anything uses it: names become the first part of row keys
(``source/role-name``) and of file names, so they are validated like ids; a host can
never be taken for an ssh option. A mistake is an ``InvalidInput`` naming the file, the
source and the field.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from runeconsole.core.errors import InvalidInput
from runeconsole.core.validate import validate_id

FIELDS = ("name", "root", "host", "command", "ssh")
# user@host, host, an ~/.ssh/config alias, an IPv6 literal; never an option ('-…').
HOST_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@:%\[\]-]*$")
DEFAULT_COMMAND = ("runeconsole",)
DEFAULT_SSH = ("ssh",)


def default_fleet_path() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "runeconsole" / "fleet.yml"


@dataclass(frozen=True)
class SourceSpec:
    """One source of the fleet file, checked."""

    name: str
    root: str
    host: str | None = None
    command: tuple[str, ...] = DEFAULT_COMMAND
    ssh: tuple[str, ...] = DEFAULT_SSH

    @property
    def local(self) -> bool:
        return self.host is None

    def local_root(self) -> Path:
        """The root on this machine (``~`` expanded); only for a local source."""
        return Path(self.root).expanduser()


def load_fleet(path: Path) -> list[SourceSpec]:
    """The sources of the fleet file at ``path``, or ``InvalidInput`` saying what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such fleet file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read the fleet file ({exc})") from None
    # A relative root of this machine is the fleet file's, wherever the command runs.
    here = path.expanduser().absolute().parent
    return [
        replace(spec, root=str(here / spec.local_root()))
        if spec.local and not spec.local_root().is_absolute()
        else spec
        for spec in parse_fleet(text, str(path))
    ]


def parse_fleet(text: str, where: str = "fleet file") -> list[SourceSpec]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{where}: not valid YAML ({_short(exc)})") from None
    if isinstance(data, dict):
        unknown = sorted(str(k) for k in data if k != "sources")
        if unknown:
            raise InvalidInput(f"{where}: unknown key {unknown[0]!r} (only 'sources' is read)")
        data = data.get("sources")
    if not isinstance(data, list) or not data:
        raise InvalidInput(f"{where}: expected a non-empty list of sources under 'sources:'")
    sources = [_source(item, f"{where}: source {n}") for n, item in enumerate(data, 1)]
    seen: set[str] = set()
    for source in sources:
        if source.name in seen:
            raise InvalidInput(f"{where}: two sources are named {source.name!r}")
        seen.add(source.name)
    return sources


def _source(item: Any, where: str) -> SourceSpec:
    if not isinstance(item, dict):
        raise InvalidInput(f"{where}: expected a mapping with name and root")
    unknown = sorted(str(k) for k in item if k not in FIELDS)
    if unknown:
        raise InvalidInput(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
    name = item.get("name")
    if name is None:
        raise InvalidInput(f"{where}: 'name' is missing")
    name = validate_id(name if isinstance(name, str) else str(name), f"{where}: name")
    where = f"{where} ({name})"
    root = item.get("root")
    if not isinstance(root, str) or not root.strip():
        raise InvalidInput(f"{where}: 'root' must be a path")
    if "\x00" in root or "\n" in root:
        raise InvalidInput(f"{where}: 'root' holds a control character")
    host = item.get("host")
    if host is not None:
        if not isinstance(host, str) or not HOST_PATTERN.fullmatch(host):
            raise InvalidInput(
                f"{where}: 'host' {host!r} is not a host name, user@host or ssh alias"
            )
        if not root.startswith(("/", "~")):
            raise InvalidInput(f"{where}: a remote 'root' must be absolute (or start with ~)")
    command = _words(item.get("command", list(DEFAULT_COMMAND)), f"{where}: 'command'")
    ssh = _words(item.get("ssh", list(DEFAULT_SSH)), f"{where}: 'ssh'")
    if host is None and "ssh" in item:
        raise InvalidInput(f"{where}: 'ssh' is only for a source with a 'host'")
    return SourceSpec(name, root, host, command, tuple(_expand(word) for word in ssh))


def _words(value: Any, where: str) -> tuple[str, ...]:
    """A word or a list of words (an argv, never a shell string)."""
    words = [value] if isinstance(value, str) else value
    if not isinstance(words, list) or not words:
        raise InvalidInput(f"{where} must be a word or a non-empty list of words")
    for word in words:
        if not isinstance(word, str) or not word or "\x00" in word:
            raise InvalidInput(f"{where}: {word!r} is not a word")
    return tuple(words)


def _expand(word: str) -> str:
    return os.path.expanduser(word) if word.startswith("~") else word


def _short(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or "syntax error"
    return f"{problem} at line {mark.line + 1}" if mark is not None else str(problem)
