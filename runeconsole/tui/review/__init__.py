"""The review screen (``screen.py``) and its parts: the document it scrolls through
(``document.py``), how each row is drawn (``painter.py``), the diff view on Textual's
Line API (``diff_view.py``) and the file list (``file_list.py``). Panes ask for a review
with ``ReviewWanted`` (``tui/support/messages.py``); the app opens it (``opening.py``)."""
