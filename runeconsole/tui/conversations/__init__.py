"""An agent's conversation in the console (``t``; ``screen.py`` on ``view.py``, the Line
API) and one search over every conversation (``S``; ``search.py``)."""
