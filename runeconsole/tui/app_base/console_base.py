"""What every console window shares (the project's console and the fleet console): tabs
of ``Pane``s, the filter line under them, ``?`` for the pane's keys, ``q`` to quit, and
no control character drawn (``tui/support/terminal_safe.py``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.filter import LineFilter
from textual.notifications import SeverityLevel
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Input

from runeconsole.tui.conversations.screen import ConversationScreen
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.panes.agents_pane import AgentsPane
from runeconsole.tui.panes.pane import AGENTS, Pane
from runeconsole.tui.panes.permissions_pane import PermissionsPane
from runeconsole.tui.panes.pipelines_pane import PipelinesPane
from runeconsole.tui.panes.problems_pane import ProblemsPane
from runeconsole.tui.panes.questions_pane import QuestionsPane
from runeconsole.tui.support.escape_relay import with_escape_relay
from runeconsole.tui.support.heap_upkeep import HeapUpkeep
from runeconsole.tui.support.messages import ConversationWanted
from runeconsole.tui.support.terminal_safe import NoControlCharacters
from runeconsole.tui.support.textual_workarounds import crop_partial_updates
from runeconsole.tui.support.toast_shelf import Toasts
from runeconsole.tui.support.workers import WorkFailed
from runeconsole.tui.widgets.filter_box import FilterBox
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from runeconsole.tui.widgets.table_view import TableView

NARROW = 100  # columns: under this the tabs take the panes' short titles


ANIMATIONS = "TEXTUAL_ANIMATIONS"


class ConsoleScreen(Screen[None]):
    """The console's screen: a focus change repaints what it restyles, not the screen.

    Textual's screen repaints every line of itself whenever the focus moves (its
    ``focused`` is a repainting reactive): at 160x45 a whole frame on ``/``, escape, a
    pane switch. The widgets whose look follows the focus repaint themselves as they are
    restyled, so nothing is lost."""

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)


class PanesApp(App[None]):
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        # Priority: it acts as the key arrives, before the keys typed after it are handed to
        # the table (whose own keys, like r for respawn, they would otherwise fire).
        Binding("slash", "filter", "Filter", priority=True),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("a", "answer_oldest", "Answer"),
        Binding("S", "search", "Search", show=False),
    ]

    NO_CONTROLS = NoControlCharacters()
    # The screens' classes by width (Textual's breakpoints): console.tcss makes the toasts
    # of a narrow pane narrower and tighter.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    # The windows' tap buttons (tap_keys.py) show in a browser; this shows them anywhere.
    force_tap_keys = False

    def __init__(self) -> None:
        super().__init__()
        # Nothing slides (a tab's underline drew 18 frames a pane switch): a console of
        # tables is read, not watched move. Textual's own TEXTUAL_ANIMATIONS still rules.
        if ANIMATIONS not in os.environ:
            self.animation_level = "none"
        crop_partial_updates()  # a region repainted is sent alone, not its line up to it
        self.toasts = Toasts(self)  # a repeat shown once, three at most, a line where read
        self.heap = HeapUpkeep(self)  # a console open for months keeps its memory flat

    def get_driver_class(self) -> type[Driver]:
        """Textual's choice, its Linux driver given a prompt escape (``escape_relay.py``)."""
        return with_escape_relay(super().get_driver_class())

    def get_default_screen(self) -> Screen[None]:
        return ConsoleScreen(id="_default")

    def on_mount(self) -> None:
        self.heap.start()
        self.toasts.start()

    async def on_event(self, event: events.Event) -> None:
        self.heap.saw(event)
        await super().on_event(event)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast, unless the same one was shown moments ago, on the shelf: with three up
        already, the oldest are folded into one; on the review, a conversation and the
        merge queue, one line (``tui/support/toast_shelf.py``). Safe from any thread, as
        Textual's."""
        self.toasts.notify(message, title, severity, timeout, markup)

    def clear_notifications(self) -> None:
        self.toasts.clear()

    # -- the tabs: short titles under 100 columns ----------------------------------------

    def compose_panes(self, panes: Sequence[Pane[Any]]) -> ComposeResult:
        """The tab strip and, under it, the panes: one shown at a time, the first at first."""
        titles = [
            (pane.PANE_ID, self.tab_title(number, pane)) for number, pane in enumerate(panes, 1)
        ]
        yield PaneTabs(titles, id="tabs")
        with ContentSwitcher(id="panes", initial=panes[0].id if panes else None):
            yield from panes

    def tab_title(self, number: int, pane: Pane[Any]) -> str:
        narrow = self.size.width < NARROW and pane.SHORT_TITLE
        return f"{number} {pane.SHORT_TITLE if narrow else pane.TITLE}"

    def on_resize(self, _: events.Resize) -> None:
        """Under 100 columns the tabs take the panes' short titles (eight fit 80)."""
        try:
            tabs = self.query_one(PaneTabs)
        except NoMatches:
            return
        for number, pane in enumerate(self.query(Pane), 1):
            tabs.set_title(pane.PANE_ID, self.tab_title(number, pane))

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the one that keeps control characters off the terminal."""
        return [*super().get_line_filters(), self.NO_CONTROLS]

    def current_pane(self) -> Pane[Any]:
        shown = self.query_one("#panes", ContentSwitcher).visible_content
        return shown if isinstance(shown, Pane) else self.query(Pane).first()

    def action_answer_oldest(self) -> None:
        """``a`` from any pane: what holds work up longest, of the permission requests,
        the blocking questions (both hold an agent up) and the pipelines' human gates
        (one holds a pipeline up), then the oldest non-blocking question (of any source)."""
        questions, permissions = self.query_one(QuestionsPane), self.query_one(PermissionsPane)
        question, request = questions.oldest(), permissions.oldest()
        waiting: list[tuple[tuple[int, float], int, Callable[[], None]]] = []
        if request is not None:
            opened = request
            waiting.append(
                (_since(request[1].asked), 0, lambda: permissions.open_modal(opened[1], opened[0]))
            )
        if question is not None and question[1].blocking:
            asked = question
            waiting.append(
                (_since(asked[1].asked), 1, lambda: questions.open_modal(asked[1], asked[0]))
            )
        for board in self.query(PipelinesPane):
            gate = board.oldest_gate()
            if gate is not None:
                waiting.append((_since(gate[1].since), 2, partial(board.open_gate, *gate)))
        if waiting:
            min(waiting, key=lambda item: item[:2])[2]()
        elif question is not None:
            questions.open_modal(question[1], question[0])
        else:
            self.notify("No open questions or permission requests.", title="Questions", timeout=3)

    def on_problems_pane_gate_wanted(self, message: ProblemsPane.GateWanted) -> None:
        """Enter on a gate in Problems: its window, from the Pipelines pane."""
        for board in self.query(PipelinesPane):
            if message.pipeline in board.records:
                board.open_gate(message.pipeline, message.gate)
                return

    def on_pipelines_pane_gates_moved(self, message: PipelinesPane.GatesMoved) -> None:
        """The gates of some pipelines moved: the Problems pane shows them."""
        for problems in self.query(ProblemsPane):
            problems.show_gates(message.gates)

    # -- moving between panes ----------------------------------------------------------------

    def action_show_pane(self, number: int) -> None:
        tabs = self.query_one(PaneTabs).tab_ids
        if 0 < number <= len(tabs):
            self.goto_pane(tabs[number - 1])

    def on_pane_tabs_chosen(self, message: PaneTabs.Chosen) -> None:
        self.goto_pane(message.tab)

    def goto_pane(self, pane_id: str) -> None:
        """Show a pane by its id (``agents``, ``questions``…), whatever its number. A filter
        belongs to the pane it was typed on: it is cleared when the pane changes. The
        toasts fold to one line while the pane shown is the merge queue's."""
        pane = next((pane for pane in self.query(Pane) if pane_id == pane.PANE_ID), None)
        if pane is None:
            return
        self.action_clear_filter()
        self.query_one(PaneTabs).active = pane_id
        self.query_one("#panes", ContentSwitcher).current = pane.id
        self.toasts.follow_tab(pane)
        pane.table.focus()

    def goto_agent(self, key: str) -> None:
        """The palette's "Go to agent", enter on a problem: the Agents pane, its row."""
        self.goto_pane(AGENTS)
        self.query_one(AgentsPane).select(key)

    def on_problems_pane_goto_agent(self, message: ProblemsPane.GotoAgent) -> None:
        self.goto_agent(message.key)

    def on_conversation_wanted(self, message: ConversationWanted) -> None:
        """``t`` in an agent's detail window: its conversation, as the Agents pane opens it."""
        self.query_one(AgentsPane).open_conversation(message.key)

    def on_conversation_screen_fork_wanted(self, message: ConversationScreen.ForkWanted) -> None:
        """``F`` on a conversation's turn: the Agents pane forks it (asked where first)."""
        self.query_one(AgentsPane).fork_at(message.key, message.at)

    def on_work_failed(self, message: WorkFailed) -> None:
        """A background job failed (``tui/support/workers.py``): shown, not fatal."""
        self.notify(message.reason, title=message.what, severity="error", timeout=15, markup=False)

    def action_help(self) -> None:
        pane = self.current_pane()
        panes = len(self.query_one(PaneTabs).tab_ids)
        self.push_screen(HelpScreen(pane.TITLE, pane.HELP_KEYS, panes=panes))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("filter", "search"):  # typed into a text box or over a window: just that
            return not isinstance(self.focused, Input) and len(self.screen_stack) == 1
        return True

    # -- one search over every conversation (``tui/conversations/search.py``) ------------

    def search_screen(self, typed: str = "") -> Screen[None] | None:
        """The search screen of this console (``None``: it has none)."""
        return None

    def action_search(self, typed: str = "") -> None:
        """``S`` from any pane, the palette: the conversation search."""
        screen = self.search_screen(typed)
        if screen is not None:
            self.push_screen(screen)

    # -- the filter: it belongs to the pane it was typed on ---------------------------------

    def action_filter(self) -> None:
        # The pane's table keeps its focused look under the line that narrows it: no
        # restyle of its lines in the blurred colours on ``/``, and back on escape.
        self.current_pane().table.keep_lit()
        self.query_one(FilterBox).open()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """The filter line lost the keys to something other than its table (a click on
        a tab, a window): the table it lit looks as blurred as it is."""
        if isinstance(event.widget, FilterBox):
            focused = self.screen.focused
            for table in self.query(TableView).filter(".-lit"):
                if table is not focused:
                    table.unlit()

    def action_clear_filter(self) -> None:
        if self.query_one(FilterBox).clear_filter():
            self.current_pane().filter_text = ""
            self.current_pane().table.focus()

    def on_filter_box_filter(self, message: FilterBox.Filter) -> None:
        self.current_pane().filter_text = message.text

    def on_filter_box_done(self, _: FilterBox.Done) -> None:
        self.current_pane().table.focus()


def _since(moment: datetime | None) -> tuple[int, float]:
    """A wait's place in ``a``'s order: the longest first, one of unknown start after."""
    return (0, moment.timestamp()) if moment is not None else (1, 0.0)
