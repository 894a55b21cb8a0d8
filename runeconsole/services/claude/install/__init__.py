"""Our hooks and status line in Claude Code's settings files: installed, chained, found,
taken out."""
