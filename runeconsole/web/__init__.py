"""``runeconsole serve``: the console in a browser, through textual-serve, behind the
access checks of ``services/serving``."""
