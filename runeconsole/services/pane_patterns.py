"""What a Claude Code pane says about its agent, read from a ``capture-pane`` screen.

Claude Code exposes no API for context usage or prompts, only its screen. Every
pattern we rely on lives here, so following a change in Claude Code's UI means
editing this module and the sample screens in ``tests/panes/``.

The screen is read bottom-up the way a person would: the transcript's last
assistant block (``⏺``, or ``●`` as Claude Code 2.1.328 draws it) and everything below
it is the *current* state (a prompt
box, a spinner, the input box); older lines only count for the phase hint and
the context figure, which Claude Code prints in its status line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WORK_PHASES = ("investigation", "planning", "implementation", "testing", "completion")
PERMISSION, QUESTION, CHOICE = "permission", "question", "choice"

CONTEXT_LEFT = (
    re.compile(r"Context left until auto-compact:\s*(\d{1,3})\s*%"),
    re.compile(r"Context low \((\d{1,3})\s*% remaining\)"),
)
COMPACTING = re.compile(r"Compacting conversation|Running PreCompact hook|PreCompact \[", re.I)
BUSY = re.compile(r"esc to interrupt", re.I)
PERMISSION_PROMPT = re.compile(
    r"^Do you want to (proceed|make this edit|create|allow|run|fetch|use)\b.*\?$", re.I
)
OPTION = re.compile(r"^(?:❯|>)?\s*(\d{1,2})\.\s+\S")
SELECTED_OPTION = re.compile(r"^❯\s*\d{1,2}\.\s+\S")
QUESTION_FOOTER = re.compile(r"Enter to select|Tab/Arrow keys to navigate", re.I)
# Claude Code asks whether to trust a directory it has not opened before (a new worktree
# outside a trusted one): its options are not numbered, and Enter picks "No, exit".
TRUST_OPTION = re.compile(r"^(?:❯\s*)?Yes, I trust this folder$")
TRUST_PROMPT = "Claude Code asks to trust this folder (Enter would exit)"
# The screen itself says Esc answers "No" (a permission prompt) or cancels (a question).
ESC_DECLINES = re.compile(r"^(?:❯\s*)?\d{1,2}\.\s+No\b.*\(esc\)$|\bEsc to cancel\b", re.I)
EXPLICIT_PHASE = re.compile(r"\bphase:\s*(" + "|".join(WORK_PHASES) + r")\b", re.I)
PLAN_MODE = re.compile(r"plan mode on", re.I)
ASSISTANT = ("⏺", "●")  # an assistant block's mark: ⏺ in older screens, ● in 2.1.328
TOOL_CALL = re.compile(r"^[⏺●]\s+([A-Z][A-Za-z]+(?: Todos)?)(?:\((.*))?$")
TEST_COMMAND = re.compile(
    r"pytest|\bnpm (run )?test|\byarn test|\bpnpm test|\bcargo test|\bgo test|\bjest\b|"
    r"\bvitest\b|unittest|\bmake (check|test)\b|\btox\b|\bnox\b",
    re.I,
)
FINISH_COMMAND = re.compile(r"\bgit (commit|push)\b|\bgh pr create\b", re.I)
TOOL_PHASES = {
    "Read": "investigation",
    "Grep": "investigation",
    "Glob": "investigation",
    "Search": "investigation",
    "LS": "investigation",
    "WebFetch": "investigation",
    "WebSearch": "investigation",
    "Task": "investigation",
    "Update Todos": "planning",
    "TodoWrite": "planning",
    "ExitPlanMode": "planning",
    "Edit": "implementation",
    "MultiEdit": "implementation",
    "Update": "implementation",
    "Write": "implementation",
    "NotebookEdit": "implementation",
}
_BORDER = "│┃|╭╮╰╯─ \t"


@dataclass(frozen=True)
class PaneReading:
    """One screen's worth of facts; ``None`` where the screen does not say."""

    context_left: int | None = None
    compacting: bool = False
    busy: bool = False
    waiting_for_input: str | None = None
    prompt: str | None = None
    phase: str | None = None
    phase_explicit: bool = False
    menu: bool = False  # options to choose from: Enter would pick the highlighted one
    esc_declines: bool = False  # the menu says Esc answers "No" or cancels it
    drawn: bool = False  # anything on screen at all (a just-started agent shows nothing)


def safe_to_type(reading: PaneReading) -> bool:
    """Whether text typed with Enter reaches the agent's input box: the screen is drawn
    and shows no menu, where Enter would accept its highlighted option (a permission
    prompt's "Yes")."""
    return reading.drawn and not reading.menu


def _clean(line: str) -> str:
    """A screen line without the box borders Claude Code draws around prompts."""
    return line.strip().strip(_BORDER).strip()


def _current_block(lines: list[str]) -> list[str]:
    """Lines from the last assistant block (``⏺``/``●``) to the bottom: what is on screen *now*."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(ASSISTANT):
            return lines[index:]
    return lines


def context_left(screen: str) -> int | None:
    found: tuple[int, int] | None = None
    for pattern in CONTEXT_LEFT:
        for match in pattern.finditer(screen):
            if found is None or match.start() > found[0]:
                found = (match.start(), min(100, int(match.group(1))))
    return None if found is None else found[1]


def _waiting(block: list[str], busy: bool) -> tuple[str | None, str | None]:
    """The kind of input the agent waits for (and the prompt line), if any."""
    if busy:
        return None, None
    body = block[1:] if block and block[0].startswith(ASSISTANT) else block
    options = [line for line in body if OPTION.match(line)]
    if any(TRUST_OPTION.match(line) for line in body):
        return CHOICE, TRUST_PROMPT
    for line in body:
        if PERMISSION_PROMPT.match(line) and options:
            return PERMISSION, line
    asked = next((line for line in reversed(body) if line.endswith("?")), None)
    selected = any(SELECTED_OPTION.match(line) for line in body)
    if any(QUESTION_FOOTER.search(line) for line in body) or (selected and asked):
        return QUESTION, asked
    if selected:
        label = next((line for line in body if line.endswith(":")), options[0])
        return CHOICE, label
    last_said = block[0].lstrip("⏺● ").strip() if block and block[0].startswith(ASSISTANT) else ""
    if last_said.endswith("?") and not TOOL_CALL.match(block[0]):
        return QUESTION, last_said
    return None, None


def phase_hint(lines: list[str]) -> tuple[str | None, bool]:
    """The work phase the screen suggests, and whether the agent said so itself.

    An explicit ``Phase: X`` line is the agent's word; otherwise plan mode, or the
    latest tool call (reading -> investigation, editing -> implementation, tests ->
    testing, commit or PR -> completion) is a hint.
    """
    if any(PLAN_MODE.search(line) for line in lines[-3:]):
        return "planning", False
    for line in reversed(lines):
        explicit = EXPLICIT_PHASE.search(line)
        if explicit:
            return explicit.group(1).lower(), True
        call = TOOL_CALL.match(line)
        if not call:
            continue
        tool, argument = call.group(1), call.group(2) or ""
        if tool == "Bash":
            if TEST_COMMAND.search(argument):
                return "testing", False
            if FINISH_COMMAND.search(argument):
                return "completion", False
            continue
        if tool in TOOL_PHASES:
            return TOOL_PHASES[tool], False
    return None, False


def read_pane(screen: str) -> PaneReading:
    lines = [_clean(line) for line in screen.splitlines()]
    lines = [line for line in lines if line]
    block = _current_block(lines)
    busy = any(BUSY.search(line) for line in block)
    waiting, prompt = _waiting(block, busy)
    body = block[1:] if block and block[0].startswith(ASSISTANT) else block
    menu = not busy and (
        waiting == PERMISSION
        or prompt == TRUST_PROMPT
        or any(SELECTED_OPTION.match(line) or QUESTION_FOOTER.search(line) for line in body)
    )
    phase, explicit = phase_hint(lines)
    return PaneReading(
        context_left=context_left(screen),
        compacting=any(COMPACTING.search(line) for line in block),
        busy=busy,
        waiting_for_input=waiting,
        prompt=prompt,
        phase=phase,
        phase_explicit=explicit,
        menu=menu,
        esc_declines=menu and any(ESC_DECLINES.search(line) for line in body),
        drawn=bool(lines),
    )
