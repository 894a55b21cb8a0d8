"""A conversation's turn on one line: a prompt's header (``▶ you (say)  14:05:09``), a tool
call (``● Bash  echo hi``: red, it failed; dim, no result yet), text made printable
(``shown``). The conversation view draws its blocks from them
(``tui/conversations/layout.py``), the detail window an agent's last turns."""

from __future__ import annotations

from datetime import datetime

from rich.style import Style
from rich.text import Text

from runeconsole.core.control import printable
from runeconsole.services.conversations.turns import OPERATOR, SYSTEM, Turn

OPERATOR_STYLE = Style(bold=True, color="cyan")
USER_STYLE = Style(bold=True)
SYSTEM_STYLE = Style(dim=True, bold=True)
DIM = Style(dim=True)
ERROR = Style(color="red")
OK = Style(color="green")
TOOL_NAME = Style(bold=True)


def shown(text: str) -> str:
    """``text`` with its lines kept and every other control character made visible."""
    return "\n".join(printable(line) for line in text.expandtabs(4).splitlines())


def _when(at: datetime | None) -> str:
    return at.astimezone().strftime("%H:%M:%S") if at is not None else ""


def prompt_header(turn: Turn) -> Text:
    if turn.speaker == OPERATOR:
        who, style = f"you ({turn.note})" if turn.note else "you", OPERATOR_STYLE
    elif turn.speaker == SYSTEM:
        who, style = f"system ({turn.note})" if turn.note else "system", SYSTEM_STYLE
    elif turn.note:
        who, style = turn.note, USER_STYLE
    else:
        who, style = "user", USER_STYLE
    text = Text.assemble(("▶ ", style), (who, style))
    if turn.at is not None:
        text.append(f"  {_when(turn.at)}", DIM)
    return text


def tool_line(turn: Turn) -> Text:
    """A tool call on one line: its mark (red: failed, dim: no result yet), the tool, what
    it acted on."""
    if not turn.tool:  # a result whose call was read before (``note`` says so)
        return Text.assemble(("● ", DIM), ("result of an earlier call", DIM))
    pending = not turn.result and not turn.is_error
    mark = ERROR if turn.is_error else DIM if pending else OK
    subject = " ".join(printable(turn.subject).split())
    text = Text.assemble(("● ", mark), (turn.tool, TOOL_NAME))
    if subject:
        text.append("  ")
        text.append(subject, ERROR if turn.is_error else "")
    return text
