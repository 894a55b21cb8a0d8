"""The panes of both consoles, each module with its rows, cells and keys, on the one
template in ``pane.py``."""
