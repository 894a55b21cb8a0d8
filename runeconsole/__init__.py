"""runeconsole: an operations console for a fleet of AI coding agents."""

__version__ = "0.1.0"
