"""The search screen (``S`` from any pane, the palette): one search over every agent's
conversation, as you type (a worker, ``DEBOUNCE`` after the last key), hits newest first
(where, when, the agent, who spoke, the snippet with the words found marked); enter opens
the conversation screen at the hit's turn.

The query is the index's (words, ``"phrases"``, ``prefix*``, ``OR``, ``-not``) with filter
tokens taken out of it: ``agent:KEY``, ``role:R``, ``tool:T``, ``since:2h`` (an age or a
moment) and ``who:you|user|assistant|system``. The fleet console's searches every source
(each one's index, over its SSH channel for a host) and merges the hits newest first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static

from runeconsole.core.control import printable
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.conversations.query import Hit, parse_since
from runeconsole.services.conversations.turns import ASSISTANT, OPERATOR, SYSTEM, USER
from runeconsole.tui.conversations.screen import ConversationScreen
from runeconsole.tui.conversations.transcripts import Transcript
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.footer import ConsoleFooter
from runeconsole.tui.widgets.keyed_table import KeyedTable
from runeconsole.tui.widgets.table_view import TableView

DEBOUNCE = 0.25  # seconds after the last key before the search runs
LIMIT = 200
SNIPPET_CHARS = 160
WHO = {
    "you": OPERATOR,
    "operator": OPERATOR,
    "me": OPERATOR,
    "user": USER,
    "assistant": ASSISTANT,
    "claude": ASSISTANT,
    "system": SYSTEM,
}
FILTERS = ("agent", "role", "tool", "since", "who")
COLUMNS = (
    ("when", "WHEN", 11),
    ("agent", "AGENT", None),
    ("who", "WHO", 14),
    ("snippet", "FOUND", None),
)
SOURCE_COLUMN = ("source", "SOURCE", None)
HELP = (
    ("words", 'each must appear; "a phrase", prefix*, a OR b, -not'),
    ("agent:KEY", "only this agent's conversations (role:R its role)"),
    ("tool:T", "only calls of this tool (Bash, Edit, …)"),
    ("since:2h", "only since: an age (90m, 6h, 2d, 1w) or a moment (2026-11-29)"),
    ("who:you", "only what you sent (who:user, who:assistant, who:system)"),
    ("↓ / tab", "to the hits; enter opens the conversation at that turn"),
    ("esc / q", "back (from the hits: to the query first)"),
)


@dataclass(frozen=True)
class Query:
    words: str
    agent: str | None = None
    role: str | None = None
    tool: str | None = None
    since: datetime | None = None
    speaker: str | None = None

    def filters(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "role": self.role,
            "tool": self.tool,
            "since": self.since,
            "speaker": self.speaker,
        }


def parse_query(typed: str, now: datetime) -> Query:
    """The words and the filter tokens of what was typed (``InvalidInput``: a filter's
    value makes no sense)."""
    words: list[str] = []
    found: dict[str, str] = {}
    for token in typed.split():
        name, colon, value = token.partition(":")
        if colon and name.lower() in FILTERS and value:
            found[name.lower()] = value
        else:
            words.append(token)
    speaker = None
    if "who" in found:
        speaker = WHO.get(found["who"].lower())
        if speaker is None:
            raise InvalidInput(f"who:{found['who']}: one of you, user, assistant, system")
    since = parse_since(found["since"], now) if "since" in found else None
    return Query(
        " ".join(words),
        agent=found.get("agent"),
        role=found.get("role"),
        tool=found.get("tool"),
        since=since,
        speaker=speaker,
    )


def snippet_text(hit: Hit, limit: int = SNIPPET_CHARS) -> Text:
    """The snippet on one line, the words found marked."""
    text = Text()
    for piece, marked in hit.spans():
        text.append(printable(piece), "bold reverse" if marked else "")
    text.truncate(limit, overflow="ellipsis")
    return text


def hit_cells(hit: Hit, sources: bool) -> list[Any]:
    when = hit.at.astimezone().strftime("%m-%d %H:%M") if hit.at else "?"
    who = f"● {hit.tool}" if hit.tool else {OPERATOR: "you"}.get(hit.speaker, hit.speaker)
    agent = Text(hit.key or "?", "bold" if hit.key else "dim")
    if hit.depth:
        agent.append(" (sub)", "dim")
    cells: list[Any] = [
        when,
        agent,
        Text(who, "cyan" if hit.speaker == OPERATOR else ""),
        snippet_text(hit),
    ]
    return [hit.source or "here", *cells] if sources else cells


Searcher = Callable[[Query, int], tuple[list[Hit], list[str]]]
Opener = Callable[[Hit], Transcript]


class SearchScreen(Screen[None]):
    DEFAULT_CSS = """
    SearchScreen {
        layout: vertical;
    }
    SearchScreen #search-title {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    SearchScreen #search-query {
        height: 3;
    }
    SearchScreen #search-hits {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    SearchScreen #search-status {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("f1", "help", "Help"),
        Binding("down,tab", "to_hits", "Hits", show=False),
    ]

    class Found(Message):
        def __init__(self, typed: str, hits: list[Hit], notes: list[str], error: str | None):
            super().__init__()
            self.typed, self.hits, self.notes, self.error = typed, hits, notes, error

    def __init__(
        self,
        searcher: Searcher,
        opener: Opener,
        now: Callable[[], datetime],
        *,
        sources: bool = False,
        typed: str = "",
    ) -> None:
        super().__init__()
        self.searcher, self.opener, self.now = searcher, opener, now
        self.sources = sources
        self.first = typed
        self.hits: list[Hit] = []
        self.typed = ""  # what the hits shown were found for
        self.searches = 0  # searches shown (tests wait on it)
        self.waiting: Timer | None = None
        self.submitted = False  # enter typed in the box: to the hits once found

    def compose(self) -> ComposeResult:
        title = Text.assemble(("Search ", "bold"), ("every conversation", "bold cyan"))
        title.append("  agent: role: tool: since: who:   F1 keys", "dim")
        yield Static(title, id="search-title")
        hint = 'words, "a phrase", prefix*  agent:KEY since:2h'
        yield Input(self.first, placeholder=hint, id="search-query")
        columns = (SOURCE_COLUMN, *COLUMNS) if self.sources else COLUMNS
        yield KeyedTable(columns, id="search-hits")
        yield Static(Text("type to search", "dim"), id="search-status")
        yield ConsoleFooter()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#search-hits", KeyedTable)

    @property
    def box(self) -> Input:
        return self.query_one("#search-query", Input)

    def on_mount(self) -> None:
        self.box.focus()
        if self.first:
            self.search(self.first)

    # -- searching --------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.waiting is not None:
            self.waiting.stop()
        typed = event.value
        self.submitted = False
        self.waiting = self.set_timer(DEBOUNCE, lambda: self.search(typed))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.waiting is not None:
            self.waiting.stop()
        self.submitted = True  # the hits are gone to as they come
        if event.value != self.typed:
            self.search(event.value)
        else:
            self.action_to_hits()

    @background("conversation-search", exclusive=True)
    def search(self, typed: str) -> None:
        if not typed.strip():
            self.post_message(self.Found(typed, [], [], None))
            return
        try:
            query = parse_query(typed, self.now())
            if not query.words:
                raise InvalidInput("search what? words after the filters")
            hits, notes = self.searcher(query, LIMIT)
        except RuneError as exc:
            if not cancelled():
                self.post_message(self.Found(typed, [], [], exc.message))
            return
        if not cancelled():
            self.post_message(self.Found(typed, hits, notes, None))

    def on_search_screen_found(self, message: Found) -> None:
        message.stop()
        self.typed, self.hits = message.typed, message.hits
        rows = [(str(n), hit_cells(hit, self.sources)) for n, hit in enumerate(message.hits)]
        self.table.replace(rows)
        status = self.query_one("#search-status", Static)
        if message.error is not None:
            status.update(Text(printable(message.error), "yellow"))
        elif not message.typed.strip():
            status.update(Text("type to search", "dim"))
        else:
            count = len(message.hits)
            said = Text(f"{count}{'+' if count >= LIMIT else ''} hit{'s' * (count != 1)}")
            said.append(", newest first · enter opens the conversation there", "dim")
            for note in message.notes:
                said.append(f" · {printable(note)}", "yellow")
            status.update(said)
        if self.submitted and message.typed == self.box.value:
            self.submitted = False
            self.action_to_hits()
        self.searches += 1

    # -- keys -------------------------------------------------------------------------

    def action_to_hits(self) -> None:
        if self.table.row_count:
            self.table.focus()

    def on_table_view_row_selected(self, event: TableView.RowSelected) -> None:
        event.stop()
        self.open_hit(int(event.key))

    def open_hit(self, number: int) -> None:
        hit = self.hits[number]
        try:
            transcript = self.opener(hit)
        except RuneError as exc:
            self.notify(exc.message, title="Conversation", severity="warning", markup=False)
            return
        words = parse_query(self.typed, self.now()).words
        plain = " ".join(w for w in words.split() if w.upper() != "OR" and not w.startswith("-"))
        first = plain.strip('"*').split('"')[0].strip() if plain else ""
        self.app.push_screen(
            ConversationScreen(transcript, land=(hit.path, hit.offset), search=first)
        )

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen("Search", HELP))

    def action_close(self) -> None:
        if self.focused is self.table:
            self.box.focus()
            return
        self.dismiss(None)
