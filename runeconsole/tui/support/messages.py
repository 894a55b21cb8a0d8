"""The messages the console's rooms send one another: a room low in the house says what
changed or what it wants opened, and the app (``tui/app_base/``, ``tui/console/``,
``tui/fleet_console/``) does it, so no room imports the one above it.

- ``FleetChanged``: the app's fleet model changed; the panes that draw it redraw rows.
- ``ReviewWanted``: open the review of an agent or of a queued branch (a pane, the
  pipeline screen, the Compare view ask; ``tui/review/opening.py`` opens it).
- ``ConversationWanted``: open an agent's conversation (the detail window's ``t``; the
  Agents pane reads where it is and opens ``tui/conversations/screen.py``).
"""

from __future__ import annotations

from textual.message import Message

from runeconsole.services.fleet import FleetChange


class FleetChanged(Message, bubble=False):
    """The app's fleet model changed (``change`` says which keys); the panes that draw it
    redraw those rows. Posted to each such pane, and no further: a heartbeat fleet
    changes 170 times a second, and each bubbled message is five more dispatches."""

    def __init__(self, change: FleetChange) -> None:
        super().__init__()
        self.change = change


class ReviewWanted(Message):
    """Open the review of an agent (``agent``), or of a queued ``branch`` with none."""

    def __init__(self, agent: str | None, branch: str | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.branch = branch


class ConversationWanted(Message):
    """Open the conversation of agent ``key`` (its row's key, in either console)."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
