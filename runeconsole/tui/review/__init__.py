"""The review screen (``screen.py``) and its parts: the document it scrolls through
(``document.py``), how each row is drawn (``painter.py``), the diff view on Textual's
Line API (``diff_view.py``) and the file list (``file_list.py``). Panes ask for a review
with ``ReviewWanted``; the app opens it."""

from __future__ import annotations

from textual.message import Message


class ReviewWanted(Message):
    """Open the review of an agent (``agent``), or of a queued ``branch`` with none."""

    def __init__(self, agent: str | None, branch: str | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.branch = branch
