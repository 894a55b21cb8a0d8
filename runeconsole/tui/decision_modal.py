"""The window in which the operator decides what an agent waits for (a question's answer,
a permission): its parts stacked in a bordered window, a countdown, a text box shown only
when an answer is typed, and a note; ``escape`` closes it without deciding."""

from __future__ import annotations

from typing import TypeVar

from textual.binding import Binding
from textual.screen import ModalScreen

Decision = TypeVar("Decision")


class DecisionModal(ModalScreen[Decision]):
    """Subclasses compose a ``VerticalScroll`` of class ``window`` holding ``part`` statics,
    a ``countdown``, a ``typed`` input and a ``note``; each may recolour its border."""

    DEFAULT_CSS = """
    DecisionModal .window {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 90%;
        border: round $warning;
        padding: 0 1;
        background: $surface;
    }
    DecisionModal .part {
        height: auto;
        padding-bottom: 1;
    }
    DecisionModal .countdown {
        height: auto;
    }
    DecisionModal .typed {
        display: none;
    }
    DecisionModal .note {
        display: none;
        height: auto;
    }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]
