"""An MCP server's request for input (a relayed Elicitation), answered in a form built
from its schema: a text or number field is an input (a number field takes digits only),
a yes/no field a switch, a choice a select; a required field is marked ``*``.

``Accept`` (or ``ctrl+s``) sends the values, checked against the schema first (a value
out of bounds or a required field left empty is said under the form, nothing sent);
``Decline`` tells the server the user said no; ``esc`` closes the window without
answering (the agent keeps waiting until Claude Code asks in its own dialog). The answer
goes the way every relayed answer goes (``QuestionModal``): one exclusive create under
the call's lock, in a worker, the countdown running meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Key
from textual.widgets import Button, Input, Select, Static, Switch

from runeconsole.core.errors import InvalidInput
from runeconsole.services.claude.questions import elicit_form, elicitation
from runeconsole.services.worker_questions import Question
from runeconsole.tui.modals.question_modal import Decide, QuestionModal

InputType = Literal["integer", "number", "text"]  # what Input's ``type`` takes
INPUT_TYPES: dict[str, InputType] = {elicit_form.INTEGER: "integer", elicit_form.NUMBER: "number"}


class ElicitationModal(QuestionModal):
    DEFAULT_CSS = """
    ElicitationModal .field {
        height: auto;
    }
    ElicitationModal .field-label {
        width: 24;
        height: auto;
        padding-right: 1;
    }
    ElicitationModal .field Input, ElicitationModal .field Select {
        width: 1fr;
    }
    ElicitationModal .field Switch {
        height: 1;
        border: none;
        padding: 0;
    }
    ElicitationModal #form-fields {
        height: auto;
        padding-bottom: 1;
    }
    ElicitationModal #form-buttons {
        height: auto;
    }
    ElicitationModal #form-buttons Button {
        margin-right: 2;
    }
    """
    BINDINGS = [Binding("ctrl+s", "accept", "Accept", priority=True)]

    def __init__(
        self,
        question: Question,
        decide: Decide,
        *,
        now: Callable[[], datetime],
        source: str | None = None,
    ) -> None:
        super().__init__([question], decide, now=now, source=source)
        try:
            self.form: elicit_form.Form | None = elicitation.form_of(question.fields)
            self.problem = ""
        except elicit_form.Unsupported as exc:
            self.form, self.problem = None, str(exc)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="question-modal", classes="window blocking"):
            yield Static(id="question-title", classes="part")
            yield Static(id="question-body", classes="part")
            with Vertical(id="form-fields"):
                for index, field in enumerate(self.form.fields if self.form else []):
                    with Horizontal(classes="field"):
                        yield Static(self._label(field), classes="field-label")
                        yield self._widget(index, field)
            with Horizontal(id="form-buttons"):
                yield Button("Accept", id="form-accept", variant="success", compact=True)
                yield Button("Decline", id="form-decline", variant="error", compact=True)
            yield Static(id="question-countdown", classes="countdown")
            yield Input(id="question-text", classes="typed")  # the window's other answers
            yield Static(id="question-note", classes="note")

    def _label(self, field: elicit_form.FormField) -> Text:
        label = Text(field.title, "bold")
        if field.required:
            label.append(" *", "bold red")
        if field.description and field.kind in (elicit_form.BOOLEAN, elicit_form.CHOICE):
            label.append(f"\n{field.description}", "dim")  # an input shows it as its hint
        return label

    def _widget(self, index: int, field: elicit_form.FormField) -> Input | Switch | Select[Any]:
        name = f"field-{index}"
        if field.kind == elicit_form.BOOLEAN:
            return Switch(value=field.default is True, id=name)
        if field.kind == elicit_form.CHOICE:
            options = [(label, value) for value, label in field.choices]
            chosen = field.default if field.default is not None else Select.NULL
            return Select(
                options, value=chosen, allow_blank=True, id=name, prompt="choose…", compact=True
            )
        given = "" if field.default is None else str(field.default)
        kind: InputType = INPUT_TYPES.get(field.kind, "text")
        hint = " · ".join(part for part in (self._bounds(field), field.description) if part)
        return Input(value=given, type=kind, id=name, placeholder=hint, compact=True)

    @staticmethod
    def _bounds(field: elicit_form.FormField) -> str:
        if field.minimum is not None and field.maximum is not None:
            return f"{field.minimum:g} to {field.maximum:g}"
        if field.minimum is not None:
            return f"at least {field.minimum:g}"
        if field.maximum is not None:
            return f"at most {field.maximum:g}"
        return field.format

    def on_mount(self) -> None:
        """(Textual then runs ``QuestionModal.on_mount``, which draws the title and body.)"""
        if self.problem:
            self._note(f"This form cannot be shown: {self.problem}", "bold red")
        fields = self.query(".window Input, .window Switch, .window Select").exclude(".typed")
        if fields:
            fields.first().focus()

    def _title(self) -> Text:
        question = self.question
        server = elicitation.server_of(question.fields)
        title = Text.assemble(("● blocking", "bold red"), "  ", (f"{server} asks", "bold cyan"))
        title.append(f"  (an MCP server, through {question.worker or 'an agent'})")
        title.append(f"\n{question.id}", "dim")
        return title

    def _body(self) -> Text:
        question = self.question
        if question.error:
            return super()._body()
        body = Text(question.text, "bold")
        body.append("\nAccept (ctrl+s) sends the form · Decline says no · esc closes", "dim")
        return body

    def tap_keys(self) -> list[tuple[str, str]]:
        """Served to a browser: the form's own buttons take taps; only Close is added."""
        return [("escape", "Close")]

    def _draw_options(self) -> None:
        """A form has fields, not options."""

    def on_key(self, event: Key) -> None:
        """Keys go to the form's fields; only the window's own bindings act here (not the
        option keys of ``QuestionModal.on_key``)."""
        event.prevent_default()

    # -- answering ------------------------------------------------------------------------

    @on(Button.Pressed, "#form-accept")
    def accept_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_accept()

    @on(Button.Pressed, "#form-decline")
    def decline_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._send(elicit_form.answer_text(elicit_form.DECLINE))

    def action_accept(self) -> None:
        if self.form is None:
            return
        try:
            content = self.form.check_content(self.values())
        except InvalidInput as exc:
            self._note(exc.message, "bold red")
            return
        self._send(elicit_form.answer_text(elicit_form.ACCEPT, content))

    def values(self) -> dict[str, Any]:
        """Each field's value as the schema wants it (a field left empty: not given)."""
        assert self.form is not None
        content: dict[str, Any] = {}
        for index, field in enumerate(self.form.fields):
            widget = self.query_one(f"#field-{index}")
            if isinstance(widget, Switch):
                content[field.name] = widget.value
            elif isinstance(widget, Select):
                if widget.value is not Select.NULL:
                    content[field.name] = widget.value
            elif isinstance(widget, Input) and widget.value.strip():
                content[field.name] = field.parse(widget.value)
        return content

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """``enter`` in a field moves on to the next (after the last: Accept); a field's
        text is never sent as the answer (``QuestionModal.on_input_submitted``)."""
        event.stop()
        event.prevent_default()
        self.focus_next()

    def _send(self, text: str) -> None:
        if not (self.closing or self.sending):
            self.answer(text=text)
