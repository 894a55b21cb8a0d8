"""Blocking work off the UI thread, with one error policy.

Anything that can block (a write fsynced under a lock, git, hashing files) runs in a
``@background`` method: a thread worker whose exception is never fatal to the console
(``exit_on_error=False``) and is shown to the operator instead, through a ``WorkFailed``
message that bubbles up to the app. The method checks ``get_current_worker().is_cancelled``
before it posts its result back as a message (the widget may be gone: the console closing,
a modal dismissed).

The method may be a widget's (a pane, a screen, the app: the worker is the widget's and
ends with it) or a helper's that the app holds and that holds the app as ``app`` (the
console's upkeep, the background-sessions poll): its worker is then the app's, and its
failure is posted to the app. Every worker of the console is started here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from textual.app import App
from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker, get_current_worker

from runeconsole.core.errors import RuneError


class OfTheApp(Protocol):
    """A widget, or a helper the app holds: what a worker is started for."""

    @property
    def app(self) -> App[Any]: ...


W = TypeVar("W", bound=OfTheApp)
P = ParamSpec("P")


class WorkFailed(Message):
    """A background job raised: what it was doing and why it failed (shown, not fatal)."""

    def __init__(self, what: str, error: BaseException) -> None:
        super().__init__()
        self.what = what
        self.error = error

    @property
    def reason(self) -> str:
        if isinstance(self.error, RuneError):
            return self.error.message
        return f"{type(self.error).__name__}: {self.error}"


def cancelled() -> bool:
    """In a worker: was it cancelled (its widget removed, the console closing)?"""
    return get_current_worker().is_cancelled


def background(
    what: str, *, exclusive: bool = False
) -> Callable[[Callable[Concatenate[W, P], object]], Callable[Concatenate[W, P], Worker[None]]]:
    """Run the decorated method in a thread worker of the group ``what``; an exception it
    raises is posted as ``WorkFailed`` (unless the worker was cancelled meanwhile). The
    worker is the widget's, or the app's for a helper the app holds."""

    def decorate(
        method: Callable[Concatenate[W, P], object],
    ) -> Callable[Concatenate[W, P], Worker[None]]:
        @functools.wraps(method)
        def start(owner: W, /, *args: P.args, **kwargs: P.kwargs) -> Worker[None]:
            node: DOMNode = owner if isinstance(owner, DOMNode) else owner.app

            def run() -> None:
                try:
                    method(owner, *args, **kwargs)
                except Exception as exc:  # the policy: shown to the operator, never a crash
                    if not cancelled():
                        node.post_message(WorkFailed(what, exc))

            return node.run_worker(
                run,
                name=method.__name__,
                group=what,
                exclusive=exclusive,
                exit_on_error=False,
                thread=True,
            )

        return start

    return decorate
