"""The bridge from Claude Code's hooks to the console, one job a module.

``hook`` is what Claude Code runs for every event (``runeconsole claude hook``); it must
stay fast, so the modules it reaches import nothing heavy at module level (no Textual,
watchdog, libtmux, YAML, filelock or argparse): ``payload``, ``locate``, ``agent_state``,
``relay``, ``presence``, ``settings`` and ``adapters.transcript``. ``install`` edits
Claude Code's settings files, ``answers`` and ``view`` serve the console and the CLI.
"""
