"""The status line Claude Code runs, recorded in the agent's identity."""
