"""The project console (``runeconsole``): ``create_app``, its top line, its feed of file
events and its own upkeep."""
