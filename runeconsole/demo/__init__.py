"""A throw-away project with a simulated fleet, so a newcomer sees the console move."""
