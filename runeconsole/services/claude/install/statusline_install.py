"""Our ``statusLine`` in a Claude Code settings file, chained to the one it replaces.

Claude Code shows one status line: the ``statusLine`` of the most specific settings file
that has one (local, then project, then user). ``install`` sets this file's to
``runeconsole claude statusline``, run by this installation's interpreter (as the hooks
are), and carries the status line that was in effect in its arguments, so the user's own
still runs and shows:

- ``--previous CMD``: the command of the one this file held, put back exactly by
  ``uninstall`` (its whole object is in ``--line JSON``, its command there a ``null`` that
  keeps its place: the command is an argument of its own, so running it needs no JSON);
- ``--beneath CMD``: the one a less specific file holds (it stays there; ``uninstall``
  only takes ours out).

Their ``padding`` is kept on ours, so the line sits where it did. A second install changes
nothing; an install after the interpreter moved keeps what it carries.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from runeconsole.adapters.claude_settings import SettingsFile, less_specific
from runeconsole.core.errors import InvalidInput

KEY = "statusLine"
PREVIOUS, BENEATH, LINE = "--previous", "--beneath", "--line"
COMMAND = "command"


def line_command(carried: dict[str, Any] | None, flag: str = PREVIOUS, python: str = "") -> str:
    words = [python or sys.executable, "-P", "-m", "runeconsole", "claude", "statusline"]
    if carried is not None:
        command = carried.get(COMMAND)
        rest = {name: None if name == COMMAND else value for name, value in carried.items()}
        words += [flag, command if isinstance(command, str) else ""]
        words += [LINE, json.dumps(rest, ensure_ascii=False, separators=(",", ":"))]
    return shlex.join(words)


def _words(command: object) -> list[str]:
    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return []


def is_ours(line: object) -> bool:
    """A ``statusLine`` object whose command is ``… runeconsole … claude statusline …``."""
    words = _words(line.get("command") if isinstance(line, dict) else None)
    for index in range(1, len(words)):
        if words[index - 1 : index + 1] == ["claude", "statusline"]:
            return any(os.path.basename(word) == "runeconsole" for word in words[: index - 1])
    return False


def carried(line: object) -> tuple[str, dict[str, Any]] | None:
    """What our ``statusLine`` carries: (``--previous`` or ``--beneath``, their object)."""
    words = _words(line.get("command") if isinstance(line, dict) else None)
    for flag in (PREVIOUS, BENEATH):
        if flag not in words[:-1]:
            continue
        command = words[words.index(flag) + 1]
        found: object = {"type": COMMAND, COMMAND: command}
        if LINE in words[:-1]:
            try:
                found = json.loads(words[words.index(LINE) + 1])
            except ValueError:
                return None
        if not isinstance(found, dict):
            return None
        if COMMAND in found or command:
            found[COMMAND] = command  # in the place its null kept
        return flag, found
    return None


def entry(found: tuple[str, dict[str, Any]] | None, python: str = "") -> dict[str, Any]:
    flag, theirs = found if found is not None else (PREVIOUS, None)
    line: dict[str, Any] = {"type": "command", "command": line_command(theirs, flag, python)}
    if theirs is not None and "padding" in theirs:
        line["padding"] = theirs["padding"]
    return line


def _line_of(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    line = data.get(KEY)
    if line is not None and not isinstance(line, dict):
        raise InvalidInput(f'{path}: "{KEY}" is not an object; fix it by hand, nothing was changed')
    return line


def merged(
    data: dict[str, Any], path: Path, beneath: dict[str, Any] | None, python: str = ""
) -> dict[str, Any]:
    """``data`` with our status line in, carrying theirs (``beneath``: the status line of a
    less specific file, used when this file has none)."""
    line = _line_of(data, path)
    if line is not None and is_ours(line):
        found = carried(line)
        if found is None or found[0] == BENEATH:  # follow what the other file holds now
            found = (BENEATH, beneath) if beneath is not None and not is_ours(beneath) else None
    elif line is not None:
        found = (PREVIOUS, line)
    elif beneath is not None and not is_ours(beneath):
        found = (BENEATH, beneath)
    else:
        found = None
    wanted = entry(found, python)
    if line == wanted:
        return data
    return {**data, KEY: wanted}


def removed(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """``data`` without our status line: theirs back in its place if it was in this file."""
    line = _line_of(data, path)
    if line is None or not is_ours(line):
        return data
    found = carried(line)
    if found is not None and found[0] == PREVIOUS:
        return {**data, KEY: found[1]}
    return {name: value for name, value in data.items() if name != KEY}


def in_effect_beneath(scope: str, root: Path) -> dict[str, Any] | None:
    """The status line Claude Code would show from the files less specific than ``scope``'s
    (an unreadable file there is passed over: install does not change it)."""
    for path in less_specific(scope, root):
        try:
            line = SettingsFile.read(path).data.get(KEY)
        except InvalidInput:
            continue
        if isinstance(line, dict):
            found = carried(line) if is_ours(line) else (PREVIOUS, line)
            return found[1] if found is not None else None
    return None


def describe(data: dict[str, Any]) -> str | None:
    """``claude status``'s words for a file's status line (``None``: it has none)."""
    line = data.get(KEY)
    if not isinstance(line, dict):
        return None if line is None else "unreadable (not an object)"
    if not is_ours(line):
        return f"the user's own ({line.get('command')!s}): run install to chain it"
    found = carried(line)
    if found is None:
        return "ours"
    return f"ours, then {found[1].get('command')!s}"
