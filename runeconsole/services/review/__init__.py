"""Reviewing agents' work: what each changed against its base, and deciding on it.

One job a module: ``changes`` (the model: files, commits, where each change lives),
``compute`` (git works them out), ``cache`` (kept per worktree, computed again only when
something moved), ``diff`` (a unified diff read into numbered lines), ``records`` (reviews
kept on disk), ``states`` (``review_state``), ``prompt`` (comments as one prompt),
``locate`` (where an agent works), ``settings``; ``service.Reviews`` is the facade.
Nothing is imported here: ``agents --json`` asks ``states.settled`` for most agents and
imports the rest (git, the merge queue) only when one needs it.
"""
