"""Detail of one identity: its screen and last message (kept current; ``m`` says something
to it), what Claude Code's hooks told of its session, every field as read, its
predecessor chain, its hook, its permission decisions and its reviews, as the console's
``AgentFacts`` give them (this root's, or a fleet's source's over SSH); in both consoles."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.events import Key
from textual.widgets import Static

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.claude.session import session_view
from runeconsole.services.conversations.turns import PROMPT, TOOL, Turn
from runeconsole.services.registry import AgentRecord
from runeconsole.services.review.records import ReviewRecord
from runeconsole.services.review.report import review_line
from runeconsole.tui.cells.agent_cells import cost_words, spent
from runeconsole.tui.cells.agent_facts import AgentFacts, out_of_reach
from runeconsole.tui.cells.permission_cells import decisions_text
from runeconsole.tui.cells.turn_cells import prompt_header, shown, tool_line
from runeconsole.tui.modals.agent_peek import AgentPeek
from runeconsole.tui.modals.detail_modal import DetailModal
from runeconsole.tui.modals.message_modal import MessageModal
from runeconsole.tui.support.messages import ConversationWanted
from runeconsole.tui.support.theme import LIVENESS_STYLE
from runeconsole.tui.support.workers import background, cancelled

CONVERSATION_TURNS = 6  # the last turns of its conversation shown


def reviews_text(history: list[ReviewRecord]) -> Text:
    """The agent's reviews (``d`` makes them), newest first: verdict, comments, head."""
    if not history:
        return Text("")
    text = Text("\nReviews\n", "bold")
    for record in history:
        style = {"approved": "green", "changes_requested": "yellow"}.get(record.verdict or "", "")
        text.append(review_line(record) + "\n", "red" if record.error else style)
    return text


def conversation_text(turns: list[Turn], last: int = CONVERSATION_TURNS) -> Text:
    """The conversation's last turns, one line each (``t`` opens the whole)."""
    if not turns:
        return Text("")
    text = Text("\nConversation", "bold")
    text.append("  t: all of it, tool calls opened with enter\n", "dim")
    for turn in turns[-last:]:
        text.append("  " * min(turn.depth, 3))
        if turn.kind == TOOL:
            line = tool_line(turn)
        elif turn.kind == PROMPT:
            line = prompt_header(turn)
            line.append("  ")
            line.append(" ".join(shown(turn.text).split())[:200])
        else:
            line = Text(" ".join(shown(turn.text).split())[:200] or turn.kind)
        line.truncate(160, overflow="ellipsis")
        text.append_text(line)
        text.append("\n")
    return text


class Fields:
    """Names and values in two columns, as a Rich grid of them drew them (the names bold
    cyan, two spaces, each value folded in its own column), laid out in one pass: the
    grid measured every cell, and was measured again inside the grid holding it, for the
    window's height and for each frame of it (a third of an agent's detail opening)."""

    GAP = 2

    def __init__(self, rows: Sequence[tuple[str, Text]]) -> None:
        self.rows = rows
        self.names = max((cell_len(name) for name, _ in rows), default=0)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        values = max((value.cell_len for _, value in self.rows), default=0)
        return Measurement(self.names + self.GAP + 1, self.names + self.GAP + values)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        indent = self.names + self.GAP
        room = max(1, options.max_width - indent)
        name_style = console.get_style("bold cyan")
        for name, value in self.rows:
            lines = value.wrap(console, room, overflow="fold") or [Text("")]
            for number, line in enumerate(lines):
                if number == 0:  # the name's column style on its padding too, as the grid's
                    yield Segment(name + " " * (indent - cell_len(name)), name_style)
                else:
                    yield Segment(" " * indent)
                yield from line.render(console, end="")
                yield Segment.line()


def fields_table(fields: dict[str, object]) -> Fields:
    rows = []
    for name, value in fields.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        rows.append((name, Text(str(shown))))
    return Fields(rows)


def chain_text(chain: list[AgentRecord]) -> Text:
    text = Text()
    for depth, record in enumerate(chain):
        if depth:
            text.append("   " * (depth - 1) + "└─ ", "dim")
        text.append("● ", LIVENESS_STYLE[record.liveness])
        text.append(str(record.get("agent_id") or record.key), "bold" if depth == 0 else "")
        text.append(f"  {record.status}", "dim")
        text.append("\n")
    return text


class AgentDetail(DetailModal):
    """An agent's screen and last message (kept current), its record and its hook file.
    ``m`` is offered only while a message can reach the agent: not once it has ended."""

    BINDINGS = [
        Binding("m", "message", "Message"),
        Binding("t", "conversation", "Conversation", show=False),
    ]

    def __init__(
        self,
        key: str,
        record: AgentRecord | None,
        facts: AgentFacts,
        now: Callable[[], datetime],
        where: str = "",
    ) -> None:
        super().__init__()
        self.key = key
        self.record = record
        self.facts = facts
        self.now = now
        self.where = where  # the source it runs on, in the fleet console
        self.unreachable = out_of_reach(record, key)  # why no message can reach it

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static(self._title(), id="detail-title")
            if self.session_facts():  # only when the hooks told something
                yield Static(self._session(), id="detail-session")
            if self.record is not None and not self.record.error:
                peek = partial(self.facts.peek, self.key)
                yield AgentPeek(peek, self.now, every=self.facts.peek_every)
            yield Static(self._record(), id="detail-body")

    def on_mount(self) -> None:
        super().on_mount()
        # Read once the window is drawn: threads reading and parsing beside its first
        # frame held the UI thread back from the frame the operator waits for.
        self.call_after_refresh(self._load_sections)

    def _load_sections(self) -> None:
        self.load_permissions()
        self.load_reviews()
        self.load_conversation()

    @background("detail-conversation", exclusive=True)
    def load_conversation(self) -> None:
        """The last turns of the agent's conversation (its transcript's end: read in
        milliseconds whatever its size); ``t`` opens the whole of it."""
        try:
            turns = self.facts.last_turns(self.key)
        except RuneError:
            return  # no conversation found: the section stays hidden
        shown = conversation_text(turns)
        if not cancelled():
            self.app.call_from_thread(self._show_section, "#detail-conversation", shown)

    def action_conversation(self) -> None:
        """``t``: the agent's whole conversation, opened by the app over this window (a
        screen of ``tui/conversations``, above the windows)."""
        self.app.post_message(ConversationWanted(self.key))

    @background("detail-reviews", exclusive=True)
    def load_reviews(self) -> None:
        """Every review of the agent, newest first (files: off the UI thread)."""
        shown = reviews_text(self.facts.reviews(self.key))
        if not cancelled():
            self.app.call_from_thread(self._show_section, "#detail-reviews", shown)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "message" or self.unreachable is None  # hidden: it cannot apply

    def on_key(self, event: Key) -> None:
        """``m`` where a message cannot reach the agent: why, rather than nothing."""
        if event.key == "m" and self.unreachable is not None:
            event.stop()
            self.notify(
                f"{self.unreachable}: a message cannot reach it",
                title="Message",
                severity="warning",
                markup=False,
            )

    def action_message(self) -> None:
        """``m``: a message to the agent, pasted into its pane (a refusal shown there)."""
        say = partial(self.facts.say, self.key)
        self.app.push_screen(MessageModal(self.key, say, where=self.where or None))

    @background("detail-permissions", exclusive=True)
    def load_permissions(self) -> None:
        """The agent's permission requests and who decided each (files: off the UI thread)."""
        shown = decisions_text(self.facts.permission_history(self.key))
        if not cancelled():
            self.app.call_from_thread(self._show_section, "#detail-permissions", shown)

    def _show_section(self, box_id: str, shown: Text) -> None:
        """A section read in a worker, put in its place once it has something to say: the
        conversation before the record, the permissions and the reviews (in that order)
        last. A section with nothing is no widget at all (each one is styled and laid out
        as the window opens), and is left alone: a layout under a see-through window
        draws the screen below it again too."""
        if not self.is_mounted or not shown.plain:
            return
        for box in self.query(box_id).results(Static):
            box.update(shown)
            return
        window = self.query_one("#detail")
        section = Static(shown, id=box_id.lstrip("#"))
        if box_id == "#detail-conversation":
            window.mount(section, before="#detail-body")
        elif box_id == "#detail-permissions" and self.query("#detail-reviews"):
            window.mount(section, before="#detail-reviews")
        else:
            window.mount(section)

    def _record(self) -> Group | Text:
        """The record and the hook file in one widget (each widget is styled, mounted and
        laid out as the window opens); one ``Text`` where both are, which a mouse can
        select (Textual selects in a widget of one ``Text`` only)."""
        body, hook = self._body(), self._hook()
        if isinstance(body, Text) and isinstance(hook, Text):
            return Text.assemble(body, "\n", hook)
        return Group(body, hook)

    def session_facts(self) -> list[tuple[str, str]]:
        record = self.record
        return session_view.facts(record.fields) if record is not None and not record.error else []

    def _session(self) -> Fields | Text:
        """What Claude Code's hooks told of the session (kind, stop, subagents, tasks…)."""
        facts = self.session_facts()
        if not facts:
            return Text("")
        return Fields(
            [
                (label, Text(value, "bold red" if label == "stopped" else ""))
                for label, value in facts
            ]
        )

    def _hook(self) -> Group | Text:
        hook = self.facts.hook_file(self.key)
        if hook is None:
            phase = self.facts.phase(self.key)
            return Text(f"\nhook: phase {phase}" if phase else "\nno hook file", "dim")
        if hook.error:
            return Text(f"\nhook unreadable: {hook.error}", "red")
        return Group(Text("\nHook", "bold"), fields_table(hook.fields))

    def _title(self) -> Text:
        record = self.record
        title = Text(self.key, "bold")
        if record is not None:
            title = Text.assemble(("● ", LIVENESS_STYLE[record.liveness]), title)
            title.append(f"  {record.status} · seen {format_age(record.age_seconds)} ago", "dim")
            if self.unreachable is None:
                title.append("   m: send it a message", "dim")
            elif not record.error:
                title.append("   ended: no messages reach it", "dim")
            cost = spent(record, self.now()) if not record.error else None
            if cost is not None:
                title.append(f"\ncost: {cost_words(cost)}", "dim")
        if self.where:
            title.append(f"  on {self.where}", "bold cyan")
        return title

    def _body(self) -> Group | Text:
        record = self.record
        if record is None:
            return Text("this identity no longer exists", "dim")
        if record.error:
            return Text(f"unreadable: {record.error}\n{record.path}", "red")
        try:
            chain = self.facts.chain(self.key)
        except RuneError as exc:
            chain, note = [record], Text(str(exc), "red")
        else:
            note = Text("")
        return Group(
            fields_table(record.fields),
            Text("\nPredecessor chain", "bold"),
            chain_text(chain),
            note,
        )
