"""An MCP server's elicitation as a form: its ``requested_schema`` read into fields, and
an answer checked against them. One home for both, so the hook, the console's form and
``runeconsole question answer`` agree on what a valid answer is.

The schema is the MCP form schema: a flat object whose properties are a string (a
``format``, ``minLength`` / ``maxLength``), a number or integer (``minimum`` /
``maximum``), a boolean, or an enum (``enum`` with ``enumNames``, or ``oneOf`` of
``{const, title}``); ``required`` names the fields that must be given; ``default`` is
offered. Anything else (a nested object, an array) cannot be relayed: Claude Code asks in
its own dialog.

An answer is what Claude Code's Elicitation hook returns, as JSON text:
``{"action": "accept", "content": {field: value}}``, or ``{"action": "decline"}`` /
``{"action": "cancel"}``. ``content_of`` turns the text a person typed per field into
the typed values (``3`` for an integer, ``true`` for a boolean, an enum's value for its
label).
"""

from __future__ import annotations

import json
import math

from runeconsole.core.errors import InvalidInput

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

ACCEPT, DECLINE, CANCEL = "accept", "decline", "cancel"
ACTIONS = (ACCEPT, DECLINE, CANCEL)
TEXT, NUMBER, INTEGER, BOOLEAN, CHOICE = "text", "number", "integer", "boolean", "choice"
MAX_FIELDS = 20
MAX_CHOICES = 50
MAX_TEXT = 4000
TRUE_WORDS = ("true", "yes", "y", "on", "1")
FALSE_WORDS = ("false", "no", "n", "off", "0")


class Unsupported(ValueError):
    """A schema the console cannot show as a form (Claude Code asks in its own dialog)."""


def _text(value: object, limit: int = 500) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


class FormField:
    """One property of the schema."""

    __slots__ = (
        "choices",
        "default",
        "description",
        "format",
        "kind",
        "max_length",
        "maximum",
        "min_length",
        "minimum",
        "name",
        "required",
        "title",
    )

    def __init__(self, name: str, raw: object, required: bool) -> None:
        if not isinstance(raw, dict):
            raise Unsupported(f"field {name!r} is not an object")
        self.name, self.required = name, required
        self.title = _text(raw.get("title"), 200) or name
        self.description = _text(raw.get("description"))
        self.format = _text(raw.get("format"), 40)
        self.choices: list[tuple[Any, str]] = _choices(name, raw)
        kind = raw.get("type")
        if self.choices:
            self.kind = CHOICE
        elif kind == "string":
            self.kind = TEXT
        elif kind in ("number", "integer", "boolean"):
            self.kind = {"number": NUMBER, "integer": INTEGER, "boolean": BOOLEAN}[kind]
        else:
            raise Unsupported(f"field {name!r} is of type {kind!r}")
        self.minimum, self.maximum = _number(raw.get("minimum")), _number(raw.get("maximum"))
        self.min_length = _count(raw.get("minLength"))
        self.max_length = _count(raw.get("maxLength"))
        default = raw.get("default")
        self.default = default if self._fits(default) else None

    def _fits(self, value: object) -> bool:
        try:
            self.check(value)
        except InvalidInput:
            return False
        return value is not None

    def check(self, value: object) -> Any:
        """``value`` if it is a valid value of the field (``InvalidInput`` saying why not)."""
        what = f"{self.title} ({self.name})"
        if self.kind == CHOICE:
            if not any(value == choice for choice, _ in self.choices):
                labels = ", ".join(label for _, label in self.choices)
                raise InvalidInput(f"{what}: {value!r} is not one of {labels}")
            return value
        if self.kind == BOOLEAN:
            if not isinstance(value, bool):
                raise InvalidInput(f"{what}: {value!r} is not true or false")
            return value
        if self.kind == TEXT:
            if not isinstance(value, str):
                raise InvalidInput(f"{what}: {value!r} is not a text")
            if self.min_length is not None and len(value) < self.min_length:
                raise InvalidInput(f"{what}: at least {self.min_length} characters")
            if len(value) > (self.max_length if self.max_length is not None else MAX_TEXT):
                raise InvalidInput(f"{what}: at most {self.max_length or MAX_TEXT} characters")
            return value
        number = _number(value)
        if number is None or (self.kind == INTEGER and not isinstance(value, int)):
            raise InvalidInput(
                f"{what}: {value!r} is not {'an integer' if self.kind == INTEGER else 'a number'}"
            )
        if self.minimum is not None and number < self.minimum:
            raise InvalidInput(f"{what}: {value} is below the minimum {self.minimum:g}")
        if self.maximum is not None and number > self.maximum:
            raise InvalidInput(f"{what}: {value} is above the maximum {self.maximum:g}")
        return value

    def parse(self, typed: str) -> Any:
        """The value a person typed (or chose by its label), as the schema wants it."""
        text = typed.strip()
        if self.kind == TEXT:
            return self.check(typed)
        if self.kind == BOOLEAN:
            word = text.casefold()
            if word in TRUE_WORDS or word in FALSE_WORDS:
                return word in TRUE_WORDS
            raise InvalidInput(f"{self.title} ({self.name}): {typed!r} is not yes or no")
        if self.kind == CHOICE:
            for value, label in self.choices:
                if text.casefold() in (str(value).casefold(), label.casefold()):
                    return value
            return self.check(typed)  # says which are allowed
        try:
            number: Any = int(text) if self.kind == INTEGER else float(text)
        except ValueError:
            return self.check(typed)  # says it is not a number
        if self.kind == NUMBER and number.is_integer() and "." not in text and "e" not in text:
            number = int(number)
        return self.check(number)

    def shown(self, value: object) -> str:
        """The value as the form shows it (an enum by its label)."""
        if self.kind == CHOICE:
            return next((label for choice, label in self.choices if choice == value), str(value))
        if self.kind == BOOLEAN:
            return "yes" if value else "no"
        return str(value)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _choices(name: str, raw: dict[str, Any]) -> list[tuple[Any, str]]:
    """An enum's ``(value, label)`` pairs: ``enum`` (+ ``enumNames``) or ``oneOf`` consts."""
    enum, titled = raw.get("enum"), raw.get("oneOf")
    if enum is None and titled is None:
        return []
    pairs: list[tuple[Any, str]] = []
    if isinstance(enum, list):
        names = raw.get("enumNames")
        names = names if isinstance(names, list) and len(names) == len(enum) else None
        for index, value in enumerate(enum):
            label = names[index] if names and isinstance(names[index], str) else None
            pairs.append((value, label or str(value)))
    elif isinstance(titled, list):
        for option in titled:
            if isinstance(option, dict) and "const" in option:
                label = _text(option.get("title"), 200)
                pairs.append((option["const"], label or str(option["const"])))
    valid = all(isinstance(v, str | int | float) and not isinstance(v, bool) for v, _ in pairs)
    if not pairs or not valid or len(pairs) > MAX_CHOICES:
        raise Unsupported(f"field {name!r} has an enum the console cannot offer")
    return pairs


class Form:
    """The fields of a requested schema, in the schema's order."""

    __slots__ = ("fields",)

    def __init__(self, schema: object) -> None:
        if schema is None:
            schema = {"type": "object", "properties": {}}
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise Unsupported("the requested schema is not an object")
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, dict) or len(properties) > MAX_FIELDS:
            raise Unsupported(f"the requested schema needs 0 to {MAX_FIELDS} properties")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        self.fields = [FormField(name, raw, name in required) for name, raw in properties.items()]

    def field(self, name: str) -> FormField:
        for found in self.fields:
            if found.name == name:
                return found
        names = ", ".join(f.name for f in self.fields) or "none"
        raise InvalidInput(f"the form has no field {name!r} (its fields: {names})")

    def content_of(self, typed: dict[str, str]) -> dict[str, Any]:
        """Typed values from the text given per field (an empty text: not given)."""
        content = {}
        for name, text in typed.items():
            found = self.field(name)
            if text.strip() or (found.kind == TEXT and text):
                content[name] = found.parse(text)
        return self.check_content(content)

    def check_content(self, content: object) -> dict[str, Any]:
        if not isinstance(content, dict):
            raise InvalidInput("the content of an accepted form is an object of its fields")
        checked = {name: self.field(name).check(value) for name, value in content.items()}
        missing = [f.title for f in self.fields if f.required and f.name not in checked]
        if missing:
            raise InvalidInput(f"required, not given: {', '.join(missing)}")
        return checked

    def response(self, text: str) -> tuple[str, dict[str, Any] | None]:
        """``(action, content)`` from an answer's JSON text (``InvalidInput`` when it is no
        valid answer to this form)."""
        try:
            data = json.loads(text)
        except ValueError:
            raise InvalidInput(
                'answer a form with JSON: {"action": "accept", "content": {…}} or '
                '{"action": "decline"}'
            ) from None
        action = data.get("action") if isinstance(data, dict) else None
        if action not in ACTIONS:
            raise InvalidInput(f"the answer's action is accept, decline or cancel, not {action!r}")
        if action != ACCEPT:
            return action, None
        return action, self.check_content(data.get("content", {}))

    def summary(self, action: str, content: dict[str, Any] | None) -> str:
        """One line for the Questions pane and the history: ``accept: Branch=main, …``."""
        if action != ACCEPT or not content:
            return action
        shown = ", ".join(
            f"{self.field(n).title}={self.field(n).shown(v)}" for n, v in content.items()
        )
        return f"{action}: {shown}"


def answer_text(action: str, content: dict[str, Any] | None = None) -> str:
    """The answer file's text for ``action`` (and the content of an accepted form)."""
    body: dict[str, Any] = {"action": action}
    if action == ACCEPT:
        body["content"] = content or {}
    return json.dumps(body, ensure_ascii=False, sort_keys=True)


def hook_output(action: str, content: dict[str, Any] | None) -> str:
    """What the Elicitation hook prints: Claude Code answers the MCP server with it."""
    specific: dict[str, Any] = {"hookEventName": "Elicitation", "action": action}
    if action == ACCEPT:
        specific["content"] = content or {}
    return json.dumps({"hookSpecificOutput": specific}, ensure_ascii=False)
