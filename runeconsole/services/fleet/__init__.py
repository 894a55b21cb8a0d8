"""The fleet model (``model``) and the stat index that keeps its rescans cheap (``index``)."""

from runeconsole.services.fleet.model import FleetChange, FleetModel, Scan, hook_phase

__all__ = ["FleetChange", "FleetModel", "Scan", "hook_phase"]
