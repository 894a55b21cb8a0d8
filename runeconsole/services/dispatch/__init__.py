"""Starting the work: a task becomes agents in fresh worktrees (``creation``), its attempts
compared, tested and one picked (``tasks``), every worktree listed and removed when its
work has landed or been dropped (``worktree_list``, ``removal``)."""
