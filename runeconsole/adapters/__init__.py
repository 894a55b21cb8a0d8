"""The outside world: git, tmux, Claude Code task files, file watching, the clock."""
