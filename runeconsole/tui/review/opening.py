"""Opening a review: the app's one review screen, kept between reviews (building it again
each time was most of what opening one cost).

The first review pushes the screen at once (it reads its target as it is shown). A later
one starts reading before the screen comes up, and the screen is pushed when the reading
comes back, so its first paint holds the diff (a screen pushed first is painted twice:
empty, then with the diff); a slow reading (a remote source) brings the screen up after
``PUSH_WAIT`` all the same, saying it is reading.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

from runeconsole.services.review.targets import ReviewTarget

if TYPE_CHECKING:
    from runeconsole.tui.review.screen import ReviewScreen

PUSH_WAIT = 0.15  # seconds: the longest a key waits for the screen to come up


def open_review(app: App[Any], target: ReviewTarget) -> ReviewScreen:
    """Show the review of ``target`` (the screen is installed the first time)."""
    from runeconsole.tui.review.screen import SCREEN_NAME, ReviewScreen

    if not app.is_screen_installed(SCREEN_NAME):
        first = ReviewScreen(target)
        app.install_screen(first, SCREEN_NAME)
        app.push_screen(first)
        return first
    screen = app.get_screen(SCREEN_NAME)
    assert isinstance(screen, ReviewScreen)
    shown = screen in app.screen_stack
    screen.retarget(target)  # its reading starts now
    if not shown and screen.is_mounted:
        screen.push_when_loaded(PUSH_WAIT)
    elif not shown:
        app.push_screen(screen)
    return screen
