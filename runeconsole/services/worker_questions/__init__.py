"""Worker questions: ``tmp/.rune-signals/rune-work-{ts}/{task}.q{seq}.question|answer``
(and background workers' ``tmp/work/{ts}/questions/{task}.question|answer``).

The orchestrator persists each worker question here and waits for its answer; the
operator answers from the console or the CLI, or the timeout picks option A. Only the
asker applies a timeout: a question runeconsole asked (``ask``) has one, a question
another tool asked (Rune's orchestrator, which relays answers itself) is shown as asked
by another tool and answered only by someone, never on its own. Every
answer is created with an exclusive link, so whoever writes first wins and a later
writer (operator, console timer or ``ask`` timer) learns who did; nothing ever replaces
an answer. Sequence numbers come from the files under a lock, so they survive restarts
and two concurrent ``ask`` never collide. Files other tools wrote are read as they are;
a bad one is reported as unreadable, never fatal. Claude Code's questions (its
AskUserQuestion calls, an MCP server's elicitations) come in as worker questions too:
``services/claude/questions`` relays them here and sends the answers back.

One job a module: ``locations`` (where question files are, in both of Rune's layouts, and
their ids), ``options`` (how options are stored and given), ``records`` (questions,
answers, requests), ``task_status`` (is the task still in progress), ``settings``, and
``service.Questions``. The names callers use are re-exported here.
"""

from runeconsole.services.worker_questions.locations import ANSWER, FILE_NAME, QUESTION, Locations
from runeconsole.services.worker_questions.options import Option
from runeconsole.services.worker_questions.records import (
    ANOTHER_TOOL,
    ANSWERED,
    AUTO_TIMEOUT,
    BLOCKING,
    CAP_EXCEEDED,
    DISCARDED,
    NON_BLOCKING,
    PENDING,
    UNREADABLE,
    URGENCIES,
    USER,
    AlreadyAnswered,
    Answer,
    AskRequest,
    OpenCount,
    Question,
    RelayDisabled,
    TaskCheck,
    format_left,
)
from runeconsole.services.worker_questions.service import Questions
from runeconsole.services.worker_questions.settings import RelaySettings, validate_timeout

__all__ = [
    "ANOTHER_TOOL",
    "ANSWER",
    "ANSWERED",
    "AUTO_TIMEOUT",
    "BLOCKING",
    "CAP_EXCEEDED",
    "DISCARDED",
    "FILE_NAME",
    "NON_BLOCKING",
    "PENDING",
    "QUESTION",
    "UNREADABLE",
    "URGENCIES",
    "USER",
    "AlreadyAnswered",
    "Answer",
    "AskRequest",
    "Locations",
    "OpenCount",
    "Option",
    "Question",
    "Questions",
    "RelayDisabled",
    "RelaySettings",
    "TaskCheck",
    "format_left",
    "validate_timeout",
]
