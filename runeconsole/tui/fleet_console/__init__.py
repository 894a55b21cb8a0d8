"""One console over every source of a fleet file (``runeconsole --fleet FILE``)."""
