"""The Textual console. Talks only to services; never reads state files itself."""
