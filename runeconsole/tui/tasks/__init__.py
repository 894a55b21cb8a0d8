"""Tasks and their attempts, and every worktree: the Compare view of a task's attempts
(``compare.py``), the Worktrees view (``worktrees.py``), what ending attempts would lose,
asked first (``confirms.py``, the blocking half in ``ending.py``), one attempt's diff
against another's branch in the review screen (``attempt_diff.py``) and how rows are
drawn (``cells.py``). The Tasks pane is ``tui/panes/tasks_pane.py``; the palette's
commands for tasks are ``tui/app_base/commands.py``'s."""
