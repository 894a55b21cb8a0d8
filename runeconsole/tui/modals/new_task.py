"""``n``: the form that starts a task, here or on a fleet's source.

The operator writes the task (several lines), and may change its role (``worker``), its
name (suggested from the task as it is typed, unique among the tasks, agents, branches
and worktrees of the role: ``taken``, read once per role off the UI thread), the base
(the merge queue's main branch), the model (empty: Claude Code's default), the
permission mode, a tmux or a background session, and the number of attempts (1 to 16).
ctrl+s (or Start) hands back a ``NewTask``; esc (or Cancel) closes it with ``None``.
Input the service would refuse (an empty task, a name that is not an id, a count out of
range) is said in the form, in red, with the field marked; nothing is sent.

Where the form knows every name taken (this project, a root of this machine), a name
left as suggested goes as it is shown (``Dispatch.new`` refuses it, saying so, if it was
taken meanwhile): the names are not read again while the operator waits, which at
10,000 agents would be most of the wait. On a host, whose branches and tasks the form
cannot see, it goes as no name at all and ``runeconsole new`` there suggests it (as
while the names are still being read); what it became is in the task the caller gets
back (``started_said`` in ``tui/support/new_task_start.py``).

``SourcePicker`` asks which source a task goes to, in a fleet console with no row chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import (
    Button,
    Input,
    OptionList,
    RadioButton,
    RadioSet,
    Select,
    Static,
    TextArea,
)

from runeconsole.core.errors import InvalidInput
from runeconsole.core.validate import validate_id
from runeconsole.services.dispatch.creation import (
    MAX_COUNT,
    MAX_TASK_CHARS,
    PERMISSION_MODES,
    NewTask,
    suggest_name,
)
from runeconsole.tui.support.workers import background

DEFAULT_MODE = ""  # the Select's value for "(default)": no --permission-mode at all


class NewTaskForm(ModalScreen[NewTask | None]):
    """The form; returns the ``NewTask`` to make (``None``: cancelled)."""

    DEFAULT_CSS = """
    NewTaskForm { align: center middle; }
    NewTaskForm #new-task {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 100%;
        border: round $accent;
        padding: 0 1;
        background: $surface;
    }
    NewTaskForm #new-task-title { height: auto; }
    NewTaskForm .label { color: $text-muted; width: 100%; }
    NewTaskForm #task-text {
        height: 7;
        min-height: 4;
        margin-bottom: 1;
    }
    NewTaskForm #new-task-fields {
        grid-size: 4;
        grid-columns: 9 1fr 9 1fr;
        grid-rows: 1;
        grid-gutter: 0 2;
        height: auto;
    }
    NewTaskForm #task-session {
        column-span: 3;
        layout: horizontal;
        height: 1;
    }
    NewTaskForm #task-session RadioButton { width: auto; margin-right: 3; }
    NewTaskForm Input, NewTaskForm SelectCurrent { background: $panel; }
    NewTaskForm Input:focus, NewTaskForm Select:focus SelectCurrent {
        background: $panel-lighten-1;
    }
    NewTaskForm .-wrong, NewTaskForm Input.-wrong { background: $error 35%; }
    NewTaskForm #new-task-status { height: auto; margin-top: 1; }
    NewTaskForm #new-task-buttons {
        height: auto;
        margin-top: 1;
        align-horizontal: right;
    }
    NewTaskForm #new-task-buttons Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("ctrl+s", "start", "Start", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(
        self,
        taken: Callable[[str], Collection[str]],
        *,
        main_branch: str | None = None,
        where: str = "",
        text: str = "",
        names_known: bool = True,
    ) -> None:
        super().__init__()
        self.taken = taken
        self.names_known = names_known
        self.main_branch = main_branch
        self.where = where
        self.initial_text = text
        self.names: dict[str, frozenset[str]] = {}  # taken, by role, as read
        self.suggested = ""  # the name field's value while the operator has not typed one

    # -- the form ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        title = Text("New task", "bold")
        title.append(f" on {self.where}" if self.where else " here", "bold cyan")
        title.append("  ctrl+s starts · esc cancels · tab moves", "dim")
        modes = [("(default)", DEFAULT_MODE), *((mode, mode) for mode in PERMISSION_MODES)]
        base_hint = "its main branch" if self.main_branch is None else self.main_branch
        with Vertical(id="new-task"):
            yield Static(title, id="new-task-title")
            yield Static("Task: the agent's first prompt", classes="label")
            yield TextArea(
                self.initial_text,
                id="task-text",
                soft_wrap=True,
                placeholder="what the agent is to do (several lines are fine)",
            )
            with Grid(id="new-task-fields"):
                yield Static("Role", classes="label")
                yield Input("worker", id="task-role", compact=True)
                yield Static("Name", classes="label")
                yield Input(placeholder="from the task", id="task-name", compact=True)
                yield Static("Base", classes="label")
                yield Input(
                    self.main_branch or "", placeholder=base_hint, id="task-base", compact=True
                )
                yield Static("Model", classes="label")
                yield Input(placeholder="Claude Code's default", id="task-model", compact=True)
                yield Static("Mode", classes="label")
                yield Select[str](
                    modes, value=DEFAULT_MODE, allow_blank=False, id="task-mode", compact=True
                )
                yield Static("Attempts", classes="label")
                yield Input("1", type="integer", id="task-count", compact=True)
                yield Static("Session", classes="label")
                with RadioSet(id="task-session", compact=True):
                    yield RadioButton("tmux", value=True, id="task-tmux")
                    yield RadioButton("background (claude --bg)", id="task-background")
            yield Static(id="new-task-status")
            with Horizontal(id="new-task-buttons"):
                yield Button("Start (ctrl+s)", variant="primary", id="new-task-start", compact=True)
                yield Button("Cancel (esc)", id="new-task-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#task-text", TextArea).focus()
        self.read_names("worker")
        self._suggest()

    def field(self, name: str) -> Input:
        return self.query_one(f"#task-{name}", Input)

    # -- the name, suggested as the task is typed -------------------------------------------

    @background("new-task-names", exclusive=True)
    def read_names(self, role: str) -> None:
        """The names a task of ``role`` may not take (a registry and git read)."""
        names = frozenset(self.taken(role))
        self.app.call_from_thread(self._names_read, role, names)

    def _names_read(self, role: str, names: frozenset[str]) -> None:
        self.names[role] = names
        self._suggest()

    def _role(self) -> str | None:
        role = self.field("role").value.strip()
        try:
            return validate_id(role, "role")
        except InvalidInput:
            return None

    def _count(self) -> int | None:
        try:
            count = int(self.field("count").value.strip())
        except ValueError:
            return None
        return count if 1 <= count <= MAX_COUNT else None

    def _suggest(self) -> None:
        """The name field follows the task until the operator types a name of their own."""
        if not self.is_mounted:
            return
        name = self.field("name")
        if name.value and name.value != self.suggested:
            self._preview()
            return
        text = self.query_one("#task-text", TextArea).text
        role = self._role() or "worker"
        suggestion = (
            suggest_name(text, set(self.names.get(role, ())), self._count() or 1)
            if text.strip()
            else ""
        )
        self.suggested = suggestion
        if name.value != suggestion:
            name.value = suggestion
        self._preview()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self._suggest()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        event.input.remove_class("-wrong")
        if event.input.id == "task-role" and (role := self._role()) and role not in self.names:
            self.read_names(role)
        if event.input.id == "task-name":
            if not event.value:
                self.suggested = ""  # emptied: it follows the task again as that changes
            self._preview()
            return
        self._suggest()

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()

    def _preview(self) -> None:
        """Under the fields: what will be made (or, after a refused Start, why not)."""
        name = self.field("name").value.strip()
        count = self._count()
        role = self._role()
        if not name or role is None or count is None:
            self._status(Text(""))
            return
        base = self.field("base").value.strip() or "its main branch"
        branch = f"agent/{role}-{name}"
        if count == 1:
            said = f"→ {branch} from {base}, in its own worktree"
        else:
            said = f"→ {count} attempts: {branch}-1 … -{count} from {base}, a worktree each"
        self._status(Text(said, "dim"))

    def _status(self, text: Text) -> None:
        if self.is_mounted:
            self.query_one("#new-task-status", Static).update(text)

    # -- starting ---------------------------------------------------------------------------

    def request(self) -> tuple[NewTask | None, list[tuple[Widget, str]]]:
        """The ``NewTask`` the form holds, or the fields that are wrong and why."""
        wrong: list[tuple[Widget, str]] = []
        area = self.query_one("#task-text", TextArea)
        text = area.text
        if not text.strip():
            wrong.append((area, "the task is empty: say what the agent is to do"))
        elif len(text) > MAX_TASK_CHARS:
            wrong.append((area, f"the task is longer than {MAX_TASK_CHARS:,} characters"))
        elif "\0" in text:
            wrong.append((area, "the task holds a NUL character"))
        role_field = self.field("role")
        role = role_field.value.strip()
        try:
            validate_id(role, "role")
        except InvalidInput as exc:
            wrong.append((role_field, exc.message))
        count = self._count()
        name_field = self.field("name")
        name = name_field.value.strip()
        if name and name != self.suggested:
            try:
                validate_id(name, "name")
                if count and count > 1:
                    validate_id(f"{name}-{count}", "name")
            except InvalidInput as exc:
                wrong.append((name_field, exc.message))
        if count is None:
            wrong.append((self.field("count"), f"attempts: a number from 1 to {MAX_COUNT}"))
        given: dict[str, str | None] = {}
        for key in ("base", "model"):
            box = self.field(key)
            value = box.value.strip()
            if value.startswith("-") or any(c.isspace() or c == "\0" for c in value):
                wrong.append((box, f"{key} {value!r}: one word, not starting with '-'"))
            given[key] = value or None
        if wrong:
            return None, wrong
        mode = self.query_one("#task-mode", Select).value
        background = self.query_one("#task-background", RadioButton).value
        if name == self.suggested and not (self.names_known and role in self.names):
            name = ""  # suggested where the task is made, from every name taken there
        return (
            NewTask(
                text=text,
                count=count or 1,
                base=given["base"],
                role=role,
                name=name or None,
                model=given["model"],
                permission_mode=mode if isinstance(mode, str) and mode else None,
                background=background,
            ),
            [],
        )

    def action_start(self) -> None:
        request, wrong = self.request()
        for widget in self.query(".-wrong"):
            widget.remove_class("-wrong")
        if request is not None:
            self.dismiss(request)
            return
        for widget, _ in wrong:
            widget.add_class("-wrong")
        said = Text("not started: ", "bold red")
        said.append("; ".join(why for _, why in wrong), "red")
        self._status(said)
        wrong[0][0].focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in a one-line field starts, as ctrl+s does (the task's box takes Enter
        as a new line)."""
        event.stop()
        self.action_start()

    @on(Button.Pressed, "#new-task-start")
    def start_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_start()

    @on(Button.Pressed, "#new-task-cancel")
    def cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)


class SourcePicker(ModalScreen[str | None]):
    """Which source a new task goes to (enter picks, esc closes)."""

    DEFAULT_CSS = """
    SourcePicker { align: center middle; }
    SourcePicker #pick-source {
        width: 50;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $accent;
        padding: 0 1;
        background: $surface;
    }
    SourcePicker OptionList { height: auto; max-height: 16; margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    def __init__(self, sources: list[str]) -> None:
        super().__init__()
        self.sources = sources

    def compose(self) -> ComposeResult:
        title = Text("New task on which source?", "bold")
        title.append("\nenter picks, esc closes", "dim")
        with Vertical(id="pick-source"):
            yield Static(title)
            yield OptionList(*self.sources, id="pick-source-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.sources[event.option_index])
