"""The bridge from Claude Code to the console, a package per protocol.

``hooks/hook.py`` is what Claude Code runs for every event (``runeconsole claude hook``)
and ``statusline/statusline.py`` its status line; both must stay fast, so the modules they
reach import nothing heavy at module level (no Textual, watchdog, libtmux, YAML, filelock
or argparse), and no ``__init__.py`` of these packages imports anything. The packages,
each importing only those below it (``[tool.importlinter]``): ``install`` (our entries in
Claude Code's settings files, ``claude status``); ``background`` and ``statusline``;
``hooks`` (the intake); ``questions`` and ``permissions`` (the relays and their
answers); ``session`` (what a session's events say, read back for the console);
``bridge`` (the event read, whose it is, the console's presence, the settings).
"""
