"""One module per protocol. Pure Python, no Textual: they take a root and a clock."""
