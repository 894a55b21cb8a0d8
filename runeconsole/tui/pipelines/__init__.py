"""The harness's DOT pipelines in the console: the board's cells (``cells.py``), a
pipeline's nodes in dependency order with their agents and its timeline
(``screen.py``), and the window a human gate is answered in (``gate_window.py``). The
panes that list them are ``tui/panes/pipelines_pane.py`` (the project console) and
``tui/fleet_console/panes.py`` (every source's)."""
