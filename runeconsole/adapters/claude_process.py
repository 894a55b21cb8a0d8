"""Which process is a Claude Code session, told from ``/proc``: named ``claude`` (it
names its own process), or a JavaScript runtime running the ``claude`` script or the npm
package's ``cli.js``. Cheap (a few small reads): the hook asks it at a session's start.
"""

from __future__ import annotations

import os

from runeconsole.core.pids import ancestors, command_of

CLAUDE_NAMES = frozenset({"claude"})
NODE_NAMES = frozenset({"node", "nodejs", "bun"})


def is_claude_code(pid: int) -> bool:
    """Whether ``pid`` is Claude Code."""
    name, argv = command_of(pid)
    if name in CLAUDE_NAMES:
        return True
    words = [os.path.basename(arg) for arg in argv[:2]]
    if words[:1] and words[0] in CLAUDE_NAMES:
        return True
    if len(words) == 2 and words[0] in NODE_NAMES:
        script = argv[1]
        return words[1] in CLAUDE_NAMES or (
            "claude-code" in script and script.endswith(("cli.js", "cli.mjs"))
        )
    return False


def nearest_claude_code(pid: int) -> int | None:
    """``pid`` itself or its nearest ancestor that is Claude Code (``None``: none is)."""
    for candidate in (pid, *ancestors(pid)):
        if is_claude_code(candidate):
            return candidate
    return None
