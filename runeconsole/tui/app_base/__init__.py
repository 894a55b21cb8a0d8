"""What both consoles are built on, just below them: ``PanesApp`` (``console_base.py``: the
tabs of panes, the filter line, ``?``, ``a``, and the app's side of the messages the rooms
send, ``tui/support/messages.py``), the palette's commands (``commands.py``) and the top
lines' spending with the budget toasts (``spend.py``)."""
