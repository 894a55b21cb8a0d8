"""The parts of the supervisor, one job a module; ``services.supervisor`` joins them."""
