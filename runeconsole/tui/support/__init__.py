"""What every part of the console shares, on the ground floor: the one worker policy,
pacing, the theme, the terminal's line filter, the toasts' shelf, the heap's upkeep, where
``n`` starts a task, and the messages the rooms send one another (``messages.py``)."""
