"""The windows a pane or a console opens: the decision windows, the confirmations, the
detail screens and their content, help, a message, a priority, a budget allowance."""
