"""The supervisor, one job a module; ``service.Supervisor`` joins them."""
