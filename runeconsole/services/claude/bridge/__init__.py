"""What every part of the bridge shares, imported by the hook's fast path: the event read,
whose it is, whether a console is open and the wait for it, the bridge's settings."""
