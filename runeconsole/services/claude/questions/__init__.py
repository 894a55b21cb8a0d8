"""The question relays: AskUserQuestion calls and an MCP server's elicitations brought to
the console, and the operator's answers sent back."""
