"""Opening a review: the app's one review screen, kept between reviews (building it again
each time was most of what opening one cost).

The first review starts reading its target (git) on a thread of its own before anything
else, then loads the screen's modules, builds the screen and pushes it at once: git ran
while they did (it waited for the screen to come up: 100-200 ms of the first review).
A later one starts reading before the screen comes up, and the screen is pushed when the
reading comes back, so its first paint holds the diff (a screen pushed first is painted
twice: empty, then with the diff); a slow reading (a remote source) brings the screen up
after ``PUSH_WAIT`` all the same, saying it is reading.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, cast

from textual.app import App

from runeconsole.services.review.targets import Loaded, ReviewTarget

if TYPE_CHECKING:
    from runeconsole.tui.review.screen import ReviewScreen

SCREEN_NAME = "review"
PUSH_WAIT = 0.15  # seconds: the longest a key waits for the screen to come up


def open_review(app: App[Any], target: ReviewTarget) -> ReviewScreen:
    """Show the review of ``target`` (the screen is installed the first time)."""
    if not app.is_screen_installed(SCREEN_NAME):
        reading = read_now(target)  # first: the screen's modules load meanwhile
        from runeconsole.tui.review.screen import ReviewScreen

        first = ReviewScreen(target, early=reading)
        app.install_screen(first, SCREEN_NAME)
        first.read_early()
        app.push_screen(first)
        return first
    screen = cast("ReviewScreen", app.get_screen(SCREEN_NAME))  # the one installed above
    shown = screen in app.screen_stack
    screen.retarget(target)  # its reading starts now
    if not shown and screen.is_mounted:
        screen.push_when_loaded(PUSH_WAIT)
    elif not shown:
        app.push_screen(screen)
    return screen


def read_now(target: ReviewTarget) -> Future[Loaded]:
    """``target.load()`` started now on a thread of its own; what it returns or raises is
    the future's, for the screen's load worker to take (its error policy stays the
    worker's). A daemon thread: a console closing does not wait for git."""
    found: Future[Loaded] = Future()

    def read() -> None:
        try:
            found.set_result(target.load())
        except BaseException as exc:  # the worker that takes it raises it
            found.set_exception(exc)

    threading.Thread(target=read, name="review-first-read", daemon=True).start()
    return found
