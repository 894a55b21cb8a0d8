"""The Textual console. Talks only to services; never reads state files itself.

A lone escape key reaches an application as the byte that also starts every other key's
escape sequence, so the terminal parser waits to see whether more follows: Textual waits
``ESCDELAY`` milliseconds (100 by default, as ncurses), and every escape (a filter
cleared, a window closed) took that long before anything happened. The console waits
10 ms, tmux's own ``escape-time`` since 3.5 (it was 500): the bytes of one key's
sequence are written together and arrive together, over ssh too, and inside a tmux pane
tmux has already waited for them. An ``ESCDELAY`` of the user's own is kept. Set before
Textual is imported (it reads it once). Textual looks at that deadline only every 100 ms;
``support/escape_relay.py`` makes it hold."""

import os

os.environ.setdefault("ESCDELAY", "10")
