"""The conversation screen (``t`` on an agent) and the search over every conversation
(``S``), on the transcript the real Claude Code wrote."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot

from runeconsole.adapters.clock import ManualClock
from runeconsole.services.conversations.turns import OPERATOR, PROMPT, TOOL
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.conversations.screen import ConversationScreen
from runeconsole.tui.conversations.search import SearchScreen, parse_query
from runeconsole.tui.conversations.view import ConversationView
from runeconsole.tui.modals.fork_choice import ForkChoice
from runeconsole.tui.panes.agent_actions import LocalAgents
from tests.support.polling import until
from tests.tui.conversation_fixtures import (
    KEY,
    append_prompt,
    append_text,
    conversation_agent,
    sent,
)


def console(root: Path) -> RuneConsole:
    return create_app(root, clock=ManualClock(), watch=False, tick_seconds=0)


def screen_text(app: App[None]) -> str:
    view = app.screen.query_one(ConversationView)
    return "\n".join(view.render_line(y).text for y in range(view.page_height))


async def opened(pilot: Pilot[None], key: str = KEY) -> ConversationScreen:
    app = pilot.app
    assert isinstance(app, RuneConsole)
    await until(pilot, lambda: key in app.agents_pane.records)
    app.agents_pane.select(key)
    await pilot.press("t")
    await until(pilot, lambda: isinstance(app.screen, ConversationScreen) and app.screen.whole)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, ConversationScreen)
    return screen


async def test_t_opens_the_agents_conversation_its_turns_in_order(project: Path) -> None:
    conversation_agent(project)
    async with console(project).run_test(size=(100, 40)) as pilot:
        screen = await opened(pilot)
        kinds = [(t.kind, t.tool or t.speaker) for t in screen.view.turns]
        assert kinds[:4] == [
            ("prompt", "user"),
            ("tool", "Bash"),
            ("tool", "Write"),
            ("tool", "Task"),
        ]
        text = screen_text(pilot.app)
        assert text.index("Please do the migration") < text.index("● Bash  echo hello-from-bash")
        assert text.index("● Write") < text.index("● Task  look around")
        assert "      ▶ subagent prompt" in text  # the subagent's turns under its call
        assert "Done. All good." in text  # Markdown drawn: **All** in bold
        assert screen.view.stick and screen.view.cursor == len(screen.view.turns) - 1
        await pilot.press("escape")
        assert not isinstance(pilot.app.screen, ConversationScreen)


async def test_enter_opens_a_tool_call_to_its_input_and_result_and_closes_it(project: Path) -> None:
    conversation_agent(project)
    async with console(project).run_test(size=(100, 40)) as pilot:
        screen = await opened(pilot)
        await pilot.press("g", "j")  # the Bash call
        turn = screen.view.cursor_turn()
        assert turn is not None and turn.tool == "Bash"
        assert "⎿ hello-from-bash" not in screen_text(pilot.app)
        await pilot.press("enter")
        text = screen_text(pilot.app)
        assert "│ echo hello-from-bash" in text and "⎿ hello-from-bash" in text
        assert text.index("⎿ hello-from-bash") < text.index("● Write")
        await pilot.press("enter")
        assert "⎿ hello-from-bash" not in screen_text(pilot.app)


async def test_slash_marks_a_word_and_n_and_N_move_between_its_hits(project: Path) -> None:
    conversation_agent(project)
    async with console(project).run_test(size=(100, 40)) as pilot:
        screen = await opened(pilot)
        view = screen.view
        await pilot.press("g", "slash")
        await pilot.press(*"good", "enter")
        first = view.cursor
        assert "good" in view.turns[first].text.lower()
        await pilot.press("n")
        second = view.cursor
        assert second > first and "good" in view.turns[second].text.lower()
        await pilot.press("N")
        assert view.cursor == first
        assert view.search == "good"
        top = view.tops[first] - int(view.scroll_offset.y)
        lines = [view.render_line(top + n) for n in range(view.heights[first])]
        marked = [s for line in lines for s in line if s.text.lower() == "good"]
        assert marked and marked[0].style is not None and marked[0].style.bgcolor is not None


async def test_brackets_go_between_the_operators_own_prompts(project: Path) -> None:
    transcript = conversation_agent(project)
    sent(project, KEY, "Please do the migration")
    append_text(transcript, "Which table first?", 1)
    append_prompt(transcript, "Only the users table", 2)
    sent(project, KEY, "Only the users table")
    async with console(project).run_test(size=(100, 40)) as pilot:
        screen = await opened(pilot)
        view = screen.view
        mine = [i for i, t in enumerate(view.turns) if t.speaker == OPERATOR]
        assert len(mine) == 2 and view.cursor == mine[1]  # the last turn: the newest
        await pilot.press("left_square_bracket")
        assert view.cursor == mine[0]
        await pilot.press("left_square_bracket")  # none before: it stays
        assert view.cursor == mine[0]
        assert "▶ you (say)" in screen_text(pilot.app)
        await pilot.press("right_square_bracket")
        assert view.cursor == mine[1]


async def test_a_turn_appended_while_shown_appears_and_keeps_the_view_at_the_bottom(
    project: Path,
) -> None:
    transcript = conversation_agent(project)
    async with console(project).run_test(size=(100, 18)) as pilot:
        screen = await opened(pilot)
        reads = screen.reads
        append_text(transcript, "A **brand new** answer", 5)
        screen.follow()
        await until(pilot, lambda: screen.reads > reads)
        await pilot.pause()
        assert screen.view.turns[-1].text == "A **brand new** answer"
        assert screen.view.stick
        assert "A brand new answer" in screen_text(pilot.app)
        # scrolled up, a new turn leaves the screen as it is
        await pilot.press("g")
        top = screen_text(pilot.app)
        append_text(transcript, "Another one", 6)
        screen.follow()
        await until(pilot, lambda: screen.view.turns[-1].text == "Another one")
        assert screen_text(pilot.app) == top


async def test_S_finds_a_word_and_enter_opens_the_conversation_at_that_turn(project: Path) -> None:
    conversation_agent(project)
    async with console(project).run_test(size=(120, 30)) as pilot:
        app = pilot.app
        assert isinstance(app, RuneConsole)
        await until(pilot, lambda: KEY in app.agents_pane.records)
        await pilot.press("S")
        assert isinstance(app.screen, SearchScreen)
        search = app.screen
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: search.searches and search.typed == "hello")
        assert search.hits and search.hits[0].key == KEY
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen) and app.screen.whole)
        await pilot.pause()
        view = app.screen.query_one(ConversationView)
        turn = view.cursor_turn()
        assert turn is not None and turn.kind == TOOL and turn.tool == "Bash"
        assert turn.offset == search.hits[0].offset
        assert "hello" in screen_text(app)


def test_a_query_s_filters_are_taken_out_of_its_words() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    query = parse_query('migration agent:worker-a tool:Bash since:2h who:you "users table"', now)
    assert query.words == 'migration "users table"'
    assert query.agent == "worker-a" and query.tool == "Bash" and query.speaker == OPERATOR
    assert query.since == datetime(2026, 11, 29, 10, tzinfo=UTC)
    assert PROMPT == "prompt"


async def test_the_agent_detail_shows_the_conversations_last_turns_and_t_opens_it(
    project: Path,
) -> None:
    from textual.widgets import Static

    from runeconsole.tui.modals.agent_detail import AgentDetail

    conversation_agent(project)
    async with console(project).run_test(size=(100, 40)) as pilot:
        app = pilot.app
        assert isinstance(app, RuneConsole)
        await until(pilot, lambda: KEY in app.agents_pane.records)
        app.agents_pane.select(KEY)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, AgentDetail))
        await until(pilot, lambda: bool(app.screen.query("#detail-conversation")))
        shown = str(app.screen.query_one("#detail-conversation", Static).render())
        assert "Conversation" in shown and "Nothing more to do." in shown
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, ConversationScreen) and app.screen.whole)


async def test_F_on_a_turn_forks_the_session_at_that_turn_in_the_worktree_chosen(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation_agent(project)
    forks: list[tuple[str, bool, str | None]] = []

    def fork(self: LocalAgents, key: str, *, new_worktree: bool, at: str | None = None) -> str:
        forks.append((key, new_worktree, at))
        return f"forked {key}"

    monkeypatch.setattr(LocalAgents, "fork", fork)
    async with console(project).run_test(size=(100, 40)) as pilot:
        screen = await opened(pilot)
        await pilot.press("g")  # the first turn: the prompt
        turn = screen.view.turns[screen.view.cursor]
        assert turn.uuid
        await pilot.press("F")
        await until(pilot, lambda: isinstance(pilot.app.screen, ForkChoice))
        await pilot.press("w")
        await until(pilot, lambda: bool(forks))
        assert forks == [(KEY, True, turn.uuid)]
