"""Claude Code's background sessions (``claude --bg``) as agents of the project."""
