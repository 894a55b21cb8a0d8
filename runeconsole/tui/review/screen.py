"""The review screen: what an agent changed, file by file, and the reviewer's decisions.

The changed files (with ``+``/``−``) beside the diff; the list folds away below 100
columns (``f`` brings it back; ``tab`` shows it while it has the focus). Reading:
``n``/``p`` files, ``]``/``[`` hunks, ``/`` search (``.``/``,`` next and previous match),
``w`` wrap. Deciding: ``c`` comments on the line under the cursor, ``C`` on the whole
change, ``S`` sends the comments to the agent as one prompt, ``A`` approves (the branch
joins the merge queue and its predicted conflicts are shown at once). Loading and every
decision run in workers; what comes back is shown.
"""

from __future__ import annotations

import time
from concurrent.futures import Future

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import DescendantFocus
from textual.message import Message
from textual.widgets import Input, Static

from runeconsole.core.errors import RuneError
from runeconsole.core.gc_passes import collector_paused, freeze_alive
from runeconsole.services.review.records import NEW, Comment
from runeconsole.services.review.targets import Loaded, ReviewTarget
from runeconsole.tui.cells.review_cells import STATE_STYLE
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.review.decisions import ReviewDecisions
from runeconsole.tui.review.diff_view import DiffView
from runeconsole.tui.review.document import Document
from runeconsole.tui.review.file_list import FileList
from runeconsole.tui.review.keys import HELP, KEYS
from runeconsole.tui.review.lexers import lexer_for
from runeconsole.tui.support.workers import background, cancelled

FOLD_BELOW = 100  # columns: narrower, the file list folds away
SEARCH, COMMENT = "search", "comment"
WARM_LEXERS = 200  # files whose highlighter is looked up as the diff is read
FIRST_ROWS = 200  # the files starting above this row: their highlighter before it is shown
WARM_LATER = 0.25  # seconds after it was shown: the other files' highlighters


class ReviewScreen(ReviewDecisions):
    DEFAULT_CLASSES = "-toasts-folded"  # toasts in one line, off the diff (toast_shelf.py)
    # The diff has the focus from the start: focused first (the first focusable widget),
    # the file list gave it up as the screen was shown, a layout and a paint more each
    # time (its focused border is another size).
    AUTO_FOCUS = "#review-diff"
    DEFAULT_CSS = """
    ReviewScreen {
        layout: vertical;
    }
    #review-title {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    #review-body {
        height: 1fr;
    }
    #review-diff {
        width: 1fr;
        height: 1fr;
    }
    #review-status {
        height: 1;
        padding: 0 1;
    }
    #review-input {
        display: none;
        height: 3;
    }
    #review-keys {
        height: 1;
        padding: 0 1;
        background: $footer-background;
    }
    """
    BINDINGS = [
        Binding("c", "comment(False)", "Comment"),
        Binding("C", "comment(True)", "Comment all", show=False),
        Binding("S", "send", "Send"),
        Binding("A", "approve", "Approve"),
        Binding("slash", "search", "Search"),
        Binding("f", "toggle_files", "Files", show=False),
        Binding("tab", "switch_focus", "Switch", show=False),
        Binding("r", "reload", "Reload", show=False),
        Binding("question_mark", "help", "Keys"),
        Binding("escape,q", "close", "Close"),
    ]
    KEYS_HELP = HELP

    class Done(Message):
        """A load or a decision came back: ``loaded`` or a message to show (``error``)."""

        def __init__(
            self,
            action: str,
            loaded: Loaded | None = None,
            said: str = "",
            error: bool = False,
            document: Document | None = None,
        ) -> None:
            super().__init__()
            self.action = action
            self.loaded = loaded
            self.said = said
            self.error = error
            self.document = document

    def __init__(self, target: ReviewTarget, *, early: Future[Loaded] | None = None) -> None:
        """``early``: the target's reading, started before the screen was built."""
        super().__init__()
        self.target = target
        self._early = early
        self.loaded: Loaded | None = None
        self.document: Document | None = None
        self.comments: list[Comment] = []
        self.files_wanted: bool | None = None  # None: by the width
        self.files_peek = False  # a folded list shown while it has the focus (tab)
        self.mode: str | None = None
        self.pending: tuple[str | None, int | None, str] | None = None  # a comment's place
        self.loads = 0  # loads shown (tests and the benchmark wait on it)
        self._fresh = True  # a target not loaded yet: loaded when the screen shows
        self._last_document: Document | None = None
        self._push_pending = False  # to be pushed when its load comes back (``opening``)

    def retarget(self, target: ReviewTarget) -> None:
        """Review ``target`` next (the screen is kept between reviews: building it again
        each time was most of what opening one cost)."""
        other = target.label != self.target.label
        self.target, self.loaded, self.document, self.comments = target, None, None, []
        self._early = None  # another target's
        self.mode = self.pending = None
        self.loads, self._fresh = 0, True
        if self.is_mounted:
            self.query_one("#review-title", Static).update(self._title(), layout=False)
            status = self.query_one("#review-status", Static)
            status.update(Text("reading the changes…", "dim"), layout=False)
            self.query_one("#review-input", Input).display = False
            self.diff_view.clear()
            if other:  # another agent's files must not show while its own are read
                self.file_list.show_files([])
            self._fresh = False
            self.load()  # at once: git runs while the screen is brought up

    def read_early(self) -> None:
        """The first review: its load worker starts now, as the screen is installed, to take
        up the reading begun before (started as the screen is first shown, the worker ran
        only after its first paints, 50-100 ms later)."""
        self._fresh = False
        self.load()

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="review-title")
        with Horizontal(id="review-body"):
            yield FileList(id="review-files")
            yield DiffView(id="review-diff")
        yield Static(Text("reading the changes…", "dim"), id="review-status")
        yield Input(id="review-input")
        yield Static(KEYS, id="review-keys")

    @property
    def diff_view(self) -> DiffView:
        return self.query_one(DiffView)

    @property
    def file_list(self) -> FileList:
        return self.query_one(FileList)

    def on_screen_resume(self) -> None:
        """Shown: a new target is read (a window closed over it reads nothing again)."""
        self._fold()
        if self._fresh:  # the first review (a later one's load began with retarget)
            self._fresh = False
            self.load()
        if self.loads == 0:
            self.diff_view.focus()

    def on_resize(self) -> None:
        self._fold()

    def _fold(self) -> None:
        wanted = self.files_wanted
        shown = self.size.width >= FOLD_BELOW if wanted is None else wanted
        self.file_list.set_class(not (shown or self.files_peek), "-hidden")

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """The diff has the focus again: a list shown for the moment folds away."""
        if self.files_peek and event.widget is not self.file_list:
            self.files_peek = False
            self._fold()

    # -- loading -----------------------------------------------------------------------

    @background("review-load", exclusive=True)
    def load(self, action: str = "load") -> None:
        """Read the review (git, files, or its source) and lay out its rows, off the UI
        thread: what reaches the screen is ready to draw."""
        early, self._early = self._early, None
        try:
            loaded = early.result() if early is not None else self.target.load()
        except RuneError as exc:
            if not cancelled():
                self.post_message(self.Done(action, said=exc.message, error=True))
            return
        document = self._laid_out(loaded)
        files = loaded.diff.files[:WARM_LEXERS]
        first = [f for f, row in zip(files, document.files, strict=False) if row < FIRST_ROWS]
        for file in first:
            lexer_for(file.path)  # found here, not while the first lines are drawn
        if cancelled():
            return
        self.post_message(self.Done(action, loaded, document=document))
        # The others' (a language's first costs ~50 ms) once the diff is drawn, for n.
        time.sleep(WARM_LATER)
        for file in files:
            if cancelled():
                return
            lexer_for(file.path)

    def _laid_out(self, loaded: Loaded) -> Document:
        """The rows of ``loaded``: the last ones again when the diff and its comments are
        the same (the diff is kept by the cache while nothing moved)."""
        kept = self._last_document
        if kept is not None and kept.diff is loaded.diff and kept.comments == loaded.comments:
            return kept
        with collector_paused():  # a row per line: many objects, no cycles
            document = Document(loaded.diff, loaded.comments)
        self._last_document = document
        return document

    def show(self, loaded: Loaded, document: Document, *, keep_cursor: bool = False) -> None:
        # What is alive now (the diff's lines among it) is left out of the collector's
        # full passes, as a fleet's rows are: the next pass, set off by the drawing below,
        # would otherwise walk every line of the diff (~50 ms of a big review's opening).
        freeze_alive()
        self.loaded, self.comments = loaded, list(loaded.comments)
        cursor = self.diff_view.cursor if keep_cursor else 0
        self._redraw(cursor, document)
        self.file_list.show_files([f.change for f in loaded.diff.files])
        self.loads += 1

    def _redraw(self, cursor: int, document: Document | None = None) -> None:
        if self.loaded is None:
            return
        self.document = document or Document(self.loaded.diff, self.comments)
        self.diff_view.show(self.document, cursor)
        self.query_one("#review-title", Static).update(self._title(), layout=False)

    def _title(self) -> Text:
        """The agent, where its work stands and the comments waiting first (they fit in 80
        columns), then the numbers and the branch."""
        text = Text.assemble(("Review ", "bold"), (self.target.label, "bold cyan"))
        loaded = self.loaded
        if loaded is None:
            return text
        changes = loaded.diff.changes
        text.append(f"  {loaded.state}", STATE_STYLE.get(loaded.state, ""))
        if self.comments:
            text.append(f"  ✎{len(self.comments)} to send", "yellow")
        text.append(f"  {changes.summary()}", "red" if changes.error else "")
        text.append(f"  {changes.branch or '(detached HEAD)'}", "dim")
        return text

    def push_when_loaded(self, wait: float) -> None:
        """Be pushed when the load under way comes back (the first paint holds the diff),
        or after ``wait`` seconds at the latest (a slow source shows its reading)."""
        self._push_pending = True
        self.app.set_timer(wait, self._push)

    def _push(self) -> None:
        if self._push_pending:
            self._push_pending = False
            if self not in self.app.screen_stack:
                self.app.push_screen(self)

    def on_review_screen_done(self, message: Done) -> None:
        message.stop()
        if message.action == "load":
            self.call_after_refresh(self._push)  # drawn with what came back
        if message.error:
            self.notify(message.said, title=f"Review: {message.action}", severity="error")
            if message.action == "load":
                status = self.query_one("#review-status", Static)
                status.update(Text(message.said, "red"))
            return
        if message.loaded is not None and message.document is not None:
            self.show(message.loaded, message.document, keep_cursor=message.action != "load")
            return
        self.notify(message.said, title="Review", timeout=8, markup=False)

    # -- moving about ------------------------------------------------------------------

    def on_diff_view_cursor_moved(self, message: DiffView.CursorMoved) -> None:
        document = self.document
        if document is not None:
            self.file_list.follow(document.file_at(message.row))
        self.query_one("#review-status", Static).update(self.diff_view.cursor_text(), layout=False)

    def on_file_list_highlighted(self, event: FileList.Highlighted) -> None:
        event.stop()
        self._to_file(event.index)

    def on_file_list_selected(self, event: FileList.Selected) -> None:
        event.stop()
        self._to_file(event.index)
        self.diff_view.focus()

    def _to_file(self, index: int) -> None:
        document = self.document
        if document is not None and 0 <= index < len(document.files):
            self.diff_view.move_to(document.files[index])
            self.diff_view._pin(document.files[index])

    def action_toggle_files(self) -> None:
        self.files_wanted = self.file_list.has_class("-hidden")
        self.files_peek = False
        self._fold()
        if self.file_list.has_class("-hidden") and self.file_list.has_focus:
            self.diff_view.focus()

    def action_switch_focus(self) -> None:
        """``tab``: from the diff to the file list, which a narrow screen shows for as long
        as it has the focus (enter on a file, or tab, goes back to the diff), and back."""
        files = self.file_list
        if not self.diff_view.has_focus:
            self.diff_view.focus()
            return
        if files.has_class("-hidden"):
            self.files_peek = True
            self._fold()
        files.focus()

    def action_reload(self) -> None:
        self.load()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen("Review", self.KEYS_HELP))

    def action_close(self) -> None:
        if self.mode is not None:
            self._close_input()
        else:
            self.dismiss(None)

    # -- the input line: search and comments -------------------------------------------

    def _open_input(self, mode: str, placeholder: str) -> None:
        box = self.query_one("#review-input", Input)
        self.mode = mode
        box.placeholder = placeholder
        box.value = self.diff_view.search if mode == SEARCH else ""
        box.display = True
        box.focus()

    def _close_input(self) -> None:
        box = self.query_one("#review-input", Input)
        box.display = False
        self.mode = self.pending = None
        self.diff_view.focus()

    def action_search(self) -> None:
        self._open_input(SEARCH, "search the diff (enter: go; . and , next and previous)")

    def action_comment(self, whole: bool) -> None:
        if not self.target.decides:
            self.notify(f"{self.target.label} has no agent here to comment to", severity="warning")
            return
        document = self.document
        if document is None:
            return
        place: tuple[str, int | None, str] | None = (
            None if whole else document.target(self.diff_view.cursor)
        )
        if place is None and not whole:
            index = document.file_at(self.diff_view.cursor)
            if index < 0:
                self.notify("put the cursor on a line of a file (C: on the whole change)")
                return
            place = (document.diff.files[index].path, None, NEW)
        file, line, side = place if place else (None, None, NEW)
        self.pending = (file, line, side)
        where = "the whole change" if file is None else file + (f":{line}" if line else "")
        self._open_input(COMMENT, f"comment on {where} (enter adds it, esc cancels)")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text, mode, pending = event.value, self.mode, self.pending
        self._close_input()
        if mode == SEARCH:
            if text and not self.diff_view.find(text):
                self.notify(f"{text!r} is nowhere in this diff", severity="warning", timeout=3)
            elif not text:
                self.diff_view.search = ""
        elif mode == COMMENT and pending is not None and text.strip():
            self.add_comment(text, *pending)

    @background("review-decide")
    def add_comment(self, text: str, file: str | None, line: int | None, side: str) -> None:
        try:
            said = self.target.comment(text, file, line, side)
        except RuneError as exc:
            self.post_message(self.Done("comment", said=exc.message, error=True))
            return
        self.app.call_from_thread(self._commented, Comment(text, file, line, side), said)

    def _commented(self, comment: Comment, said: str) -> None:
        self.comments.append(comment)
        self._redraw(self.diff_view.cursor)
        self.notify(said, title="Review", timeout=4, markup=False)
