"""Widgets with no pane of their own: the keyed table on the Line API, its rows and cells,
the filter line, the key buttons."""
