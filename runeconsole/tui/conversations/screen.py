"""The conversation screen: an agent's session, turn by turn (``view.py``), read in a
worker: a big transcript's end first (``Transcript.tail``), then the whole, then what is
appended while it is shown (``Transcript.more``, every ``follow_every`` seconds). At the
bottom it stays at the bottom as turns come; scrolled up, what is on screen stays.

Keys: ``j``/``k`` turn by turn, ↑/↓ a line, page up/down, ``g``/``G`` top and bottom,
enter opens a turn (a tool call's input and result, a long text), ``/`` searches (its
words marked), ``n``/``N`` the next and previous hit, ``[``/``]`` the operator's previous
and next prompt, ``esc``/``q`` back, ``?`` the keys.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static

from runeconsole.core.control import printable
from runeconsole.core.errors import RuneError
from runeconsole.core.gc_passes import collector_paused, freeze_alive
from runeconsole.services.conversations.turns import Turn
from runeconsole.tui.conversations.transcripts import Read, Transcript
from runeconsole.tui.conversations.view import ConversationView
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.footer import ConsoleFooter

HELP = (
    ("j / k", "the next / previous turn (the cursor ▌)"),
    ("↑ / ↓, space, b", "a line up or down, a page"),
    ("g / G", "the first turn / the last (new turns then keep it at the bottom)"),
    ("enter", "open or close the turn: a tool call's input and result, a long text"),
    ("/", "search in the conversation (words marked); n / N the next / previous hit"),
    ("[ / ]", "your previous / next prompt (a say, a review sent from here)"),
    ("▶ you (say)", "a prompt you sent; ▶ user: typed in the session; ▶ system: notices"),
    ("●", "a tool call: green done, red failed, dim no result yet"),
    ("── ──", "a compaction, a resumption; ⚠ a place that could not be read"),
    ("esc / q", "back"),
)


class ConversationScreen(Screen[None]):
    DEFAULT_CLASSES = "-toasts-folded"  # toasts in one line, off the turns (toast_shelf.py)
    DEFAULT_CSS = """
    ConversationScreen {
        layout: vertical;
    }
    ConversationScreen #conversation-title {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    ConversationScreen ConversationView {
        height: 1fr;
    }
    ConversationScreen #conversation-find {
        height: 3;
        display: none;
    }
    ConversationScreen #conversation-find.-open {
        display: block;
    }
    ConversationScreen #conversation-status {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """
    BINDINGS = [
        Binding("slash", "find", "Search"),
        Binding("F", "fork", "Fork here"),
        Binding("question_mark", "help", "Help"),
        Binding("escape,q", "close", "Close"),
    ]

    class Arrived(Message):
        """Turns read in the worker: the tail, the whole (``read``) or what came since."""

        def __init__(self, read: Read | None, batch: list[Turn] | None = None) -> None:
            super().__init__()
            self.read, self.batch = read, batch

    class ForkWanted(Message):
        """``F``: the agent's session forked at this turn (its record's uuid)."""

        def __init__(self, key: str, at: str) -> None:
            super().__init__()
            self.key, self.at = key, at

    class Failed(Message):
        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    def __init__(
        self,
        transcript: Transcript,
        *,
        land: tuple[str, int] | None = None,
        search: str = "",
    ) -> None:
        super().__init__()
        self.transcript = transcript
        self.land = land
        self.first_search = search
        self.read: Read | None = None
        self.reads = 0  # reads shown (tests wait on it)
        self.whole = False
        self.failure: str | None = None
        self.following: Timer | None = None
        self.reading_more = False

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="conversation-title")
        yield ConversationView(id="conversation-view")
        yield Input(placeholder="search this conversation (enter)", id="conversation-find")
        yield Static("reading…", id="conversation-status")
        yield ConsoleFooter()

    @property
    def view(self) -> ConversationView:
        return self.query_one(ConversationView)

    def on_mount(self) -> None:
        self.view.focus()
        if self.land is not None:
            self.view.pending = self.land
            self.view.stick = False
        self.read_all()

    # -- reading ----------------------------------------------------------------------

    @background("conversation-read", exclusive=True)
    def read_all(self) -> None:
        try:
            tail = self.transcript.tail()
            if tail is not None and not cancelled():
                self.post_message(self.Arrived(tail))
            with collector_paused():  # every turn stays alive: no full pass over them
                whole = self.transcript.whole()
        except RuneError as exc:
            if not cancelled():
                self.post_message(self.Failed(exc.message))
            return
        if not cancelled():
            self.post_message(self.Arrived(whole))

    def follow(self) -> None:
        """What was appended since, read (the timer's; a test's)."""
        if self.whole and not self.reading_more:
            self.reading_more = True
            self.read_more()

    @background("conversation-more", exclusive=True)
    def read_more(self) -> None:
        try:
            batch = self.transcript.more()
        except RuneError as exc:
            batch = []
            if not cancelled():
                self.post_message(self.Failed(exc.message))
        if not cancelled():
            self.post_message(self.Arrived(None, batch))

    def on_conversation_screen_arrived(self, message: Arrived) -> None:
        message.stop()
        view = self.view
        if message.read is not None:
            # What is alive now (the turns) is left out of the collector's full passes,
            # which would otherwise walk every turn of a big transcript on a page down.
            freeze_alive()
            self.read = message.read
            view.show(message.read.turns)
            if not message.read.partial:
                self.whole = True
                if self.following is None and self.transcript.follow_every:
                    self.following = self.set_interval(self.transcript.follow_every, self.follow)
                if self.first_search:
                    self.view.find(self.first_search)
                    self.first_search = ""
            self.reads += 1
        else:
            self.reading_more = False
            if message.batch:
                view.add(message.batch)
                self.reads += 1
        self._update()

    def on_conversation_screen_failed(self, message: Failed) -> None:
        message.stop()
        self.reading_more = False
        self.failure = message.reason
        self._update()
        self.notify(message.reason, title="Conversation", severity="error", markup=False)

    # -- what is shown ----------------------------------------------------------------

    def _title(self) -> Text:
        transcript = self.transcript
        text = Text.assemble(("Conversation ", "bold"), (transcript.key or "?", "bold cyan"))
        if transcript.where:
            text.append(f" on {transcript.where}", "dim")
        read = getattr(self, "read", None)
        if read is not None:
            if read.session_id:
                text.append(f"  session {read.session_id[:8]}", "dim")
            text.append(f"  {len(self.view.turns)} turns", "")
            if read.partial:
                text.append("  (its end; reading the rest…)", "yellow")
        return text

    def _status(self) -> Text:
        if self.failure is not None and not self.view.turns:
            return Text(printable(self.failure), "red")
        view = self.view
        turn = view.cursor_turn()
        if turn is None:
            return Text("no turns yet" if self.whole else "reading…", "dim")
        text = Text(f"turn {view.cursor + 1}/{len(view.turns)}")
        if turn.at is not None:
            text.append(f" · {turn.at.astimezone().strftime('%Y-%m-%d %H:%M:%S')}")
        text.append(f" · {turn.speaker} {turn.kind}")
        if view.search:
            text.append(f" · /{view.search}", "bold")
        if self.read is not None and self.read.skipped:
            text.append(f" · {self.read.skipped} unreadable", "red")
        if self.read is not None and self.read.error:
            text.append(f" · {printable(self.read.error)}", "red")
        if view.stick:
            text.append(" · following", "green")
        return text

    def _update(self) -> None:
        self.query_one("#conversation-title", Static).update(self._title())
        self.query_one("#conversation-status", Static).update(self._status())

    def on_conversation_view_cursor_moved(self, message: ConversationView.CursorMoved) -> None:
        message.stop()
        self._update()

    # -- keys -------------------------------------------------------------------------

    def action_find(self) -> None:
        box = self.query_one("#conversation-find", Input)
        box.add_class("-open")
        box.value = self.view.search
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        found = self.view.find(event.value)
        self._close_find()
        if event.value and not found:
            self.notify(f"{event.value!r} is nowhere in this conversation", timeout=3)
        self._update()

    def _close_find(self) -> None:
        self.query_one("#conversation-find", Input).remove_class("-open")
        self.view.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action not in ("find", "help") or not self._typing()

    def _typing(self) -> bool:
        return isinstance(self.focused, Input)

    def action_fork(self) -> None:
        view = self.view
        turn = view.turns[min(view.cursor, len(view.turns) - 1)] if view.turns else None
        if not self.transcript.key or turn is None or not turn.uuid:
            self.notify("no turn of an agent's own session here to fork at", severity="warning")
            return
        self.post_message(self.ForkWanted(self.transcript.key, turn.uuid))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen("Conversation", HELP))

    def action_close(self) -> None:
        if self._typing():
            self._close_find()
            return
        if self.following is not None:
            self.following.stop()
        self.dismiss(None)
