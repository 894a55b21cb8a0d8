"""The hook intake: ``hook.py``, what Claude Code runs for every event, and what an event
writes in the agent's identity."""
