"""What the rooms above draw alike and what they read of an agent: the cells of an agent,
of its changes and review state, of its permission decisions, a conversation's turn on
one line, and ``AgentFacts`` (what a detail window reads of one agent). Below the panes,
the windows and the screens that share them; above ``support`` and ``widgets`` only."""
