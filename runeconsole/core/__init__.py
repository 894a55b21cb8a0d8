"""Protocol-free building blocks: files, locks, validation, config."""
