"""Blocking work off the UI thread, with one error policy.

Anything that can block (a write fsynced under a lock, git, hashing files) runs in a
``@background`` method: a ``@work(thread=True)`` worker whose exception is never fatal to
the console (``exit_on_error=False``) and is shown to the operator instead, through a
``WorkFailed`` message that bubbles up to the app. The method checks
``get_current_worker().is_cancelled`` before it posts its result back as a message (the
widget may be gone: the console closing, a modal dismissed).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from textual import work
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from runeconsole.core.errors import RuneError

W = TypeVar("W", bound=MessagePump)
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
    raises is posted as ``WorkFailed`` (unless the worker was cancelled meanwhile)."""

    def decorate(
        method: Callable[Concatenate[W, P], object],
    ) -> Callable[Concatenate[W, P], Worker[None]]:
        @functools.wraps(method)
        def run(self: W, *args: P.args, **kwargs: P.kwargs) -> None:
            try:
                method(self, *args, **kwargs)
            except Exception as exc:  # the policy: shown to the operator, never a crash
                if not cancelled():
                    self.post_message(WorkFailed(what, exc))

        return work(thread=True, group=what, exclusive=exclusive, exit_on_error=False)(run)

    return decorate
