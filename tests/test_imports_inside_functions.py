"""No import inside a function to dodge a circle, anywhere in the package: what may import
what is the floors' and rooms' contracts (``tests/test_layers.py``), and an import that
could not stand at the top of its module is a circle those contracts do not show.

An import inside a function is allowed only where it is named here, with why: Claude
Code's hook and status line (a process of their own at every tool call, each event
importing only what it uses), the CLI (a command loads only its own services; ``--help``
and ``status-line`` load no Textual), a dependency that is optional or costly and needed
on one path only. ``"package.*"`` names every module under a package, ``"module"`` every
function of a module, ``"module:function"`` one function. An entry that no longer allows
anything is an error too: the list says what is, not what was."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tests.support.paths import REPO

PACKAGE = REPO / "runeconsole"

HOOK = (
    "Claude Code's hook fast path: a process of its own at every tool call and session "
    "event, each branch importing what it uses only "
    "(tests/services/claude/test_claude_hook_safety.py, benchmarks/claude_hook.py)"
)
STATUS_LINE = (
    "Claude Code's status line: a process of its own every few hundred milliseconds, "
    "which imports nothing before it has read its input (benchmarks/statusline.py)"
)
CLI = (
    "the CLI's lazy imports: a command loads its own services only, so ``runeconsole "
    "--help`` and ``status-line`` load neither Textual nor tmux (tests/cli/test_cli.py)"
)
ALLOWED: dict[str, str] = {
    "runeconsole.cli.*": CLI,
    "runeconsole.services.claude.hooks.hook": HOOK,
    "runeconsole.services.claude.hooks.agent_state": HOOK + "; lifecycle at a session's "
    "start and end alone, the meter when the transcript grew",
    "runeconsole.services.claude.hooks.lifecycle": HOOK + "; git (hook_file_changes) at a "
    "compaction alone",
    "runeconsole.services.claude.bridge.settings": HOOK + "; the settings cache: a hook "
    "that notifies reads no YAML, and the prices and budgets load when the file is read",
    "runeconsole.services.claude.bridge.locate": HOOK + "; the file writer when a "
    "background session is bound",
    "runeconsole.services.claude.permissions.rules": HOOK + "; hashlib "
    "(OpenSSL's start), the JSON and lock helpers when there are rules to read or write",
    "runeconsole.services.budgets.hold": HOOK + "; the JSON reader when an agent is held",
    "runeconsole.services.notify": HOOK + "; the sender (adapters/push.py) and the served "
    "console's link when a notification goes out",
    "runeconsole.services.claude.statusline.statusline": STATUS_LINE,
    "runeconsole.tui.review.opening:open_review": "the review screen, its diff view and "
    "Pygments (about 50 modules, 20-30 ms) on the first review, not as either console starts",
    "runeconsole.adapters.tmux": "libtmux (about 80 ms) when a caller asks for its server "
    "model (Tmux.server) only: Tmux's own commands run without it, the console's monitor too",
    "runeconsole.adapters.terminal_screen": "pyte (about 20 ms) when a background session's "
    "screen is replayed only: the console and new tasks import this module at start",
    "runeconsole.core.frontmatter": "PyYAML (20-40 ms) for a header not in the writers' plain "
    "layout only: most context files are read by the line parser, and the console starts "
    "without it",
    "runeconsole.adapters.push": "Apprise is an optional extra (runeconsole[notify]); the "
    "process and the thread that send start on a notification only (the hook's path)",
    "runeconsole.core.locks": "filelock when a lock is taken only: agents --json and the "
    "hook take none (tests/services/claude/test_claude_hook_safety.py)",
    "runeconsole.core.talisman_files": "PyYAML when a talisman file exists only: a command "
    "run from a script pays nothing for it with no file",
    "runeconsole.services.worker_questions.service": "watchdog when a question is waited on only",
    "runeconsole.services.review.states": "the queue's states when an agent's review has "
    "an approval only: agents --json settles most agents without them",
    "runeconsole.services.review.service": "libtmux (the reply service, about 140 ms) when "
    "a review is sent to its agent only",
    "runeconsole.tui.conversations.layout:draw": "Rich's Markdown and markdown-it (30-60 ms) "
    "when a conversation shows an answer in Markdown only, not as the console starts",
    # The new-task form's widgets (TextArea, Select, RadioSet…: about 20 ms and 15 modules)
    # load on the first n, not at every console's start (benchmarks/cold_start.py).
    "runeconsole.tui.panes.agents_pane:action_new_task": "the form's widgets on the first n",
    "runeconsole.tui.panes.agents_pane:new_task_on": "the form's widgets on the first n",
}


@dataclass(frozen=True)
class Inner:
    module: str
    function: str
    line: int
    text: str

    def __str__(self) -> str:
        path = self.module.replace(".", "/")
        return f"{path}.py:{self.line} in {self.function}(): {self.text}"


def module_name(relative: str) -> str:
    parts = relative.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_inside_functions() -> list[Inner]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(str(path.relative_to(REPO)))
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found.extend(_inner(tree, module, function=None))
    return found


def _inner(node: ast.AST, module: str, function: str | None) -> list[Inner]:
    found = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom) and function is not None:
            found.append(Inner(module, function, child.lineno, ast.unparse(child)))
        inside = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else None
        found.extend(_inner(child, module, inside or function))
    return found


def allowed_by(inner: Inner) -> str | None:
    """The entry of ``ALLOWED`` that lets this import be where it is (``None``: none)."""
    for entry in ALLOWED:
        if entry.endswith(".*") and inner.module.startswith(entry[:-1]):
            return entry
        if entry in (inner.module, f"{inner.module}:{inner.function}"):
            return entry
    return None


def test_no_import_inside_a_function_but_the_named_ones() -> None:
    stray = [str(inner) for inner in imports_inside_functions() if allowed_by(inner) is None]
    assert not stray, (
        "imports inside functions (move them to the top of the module; a circle that stops "
        "you is a floor or a room in the wrong place, tests/test_layers.py; a fast path "
        "goes in ALLOWED with why):\n" + "\n".join(stray)
    )


def test_every_exception_named_still_allows_an_import() -> None:
    used = {allowed_by(inner) for inner in imports_inside_functions()}
    assert not set(ALLOWED) - used, f"no longer needed: {sorted(set(ALLOWED) - used)}"


def test_the_walk_finds_an_import_in_a_nested_function_and_a_method() -> None:
    tree = ast.parse(
        "import os\n"
        "class A:\n"
        "    import sys\n"
        "    def f(self):\n"
        "        def g():\n"
        "            from json import dumps\n"
        "        import re\n"
    )
    found = [(inner.function, inner.text) for inner in _inner(tree, "m", None)]
    assert found == [("g", "from json import dumps"), ("f", "import re")]
