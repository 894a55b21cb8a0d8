"""A Claude Code session as its events tell it: what it is doing, the facts of the newer
events, its meter, and each read back for the console."""
