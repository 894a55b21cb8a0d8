"""The agents a console shows: typed records with counts and problems kept per change
(``records``), fed from a root's files (``model``) or from anywhere (another source's
stream), and the stat index that keeps a root's rescans cheap (``index``)."""

from runeconsole.services.fleet.model import FleetModel, Scan, hook_phase
from runeconsole.services.fleet.problem import Judge, Problem
from runeconsole.services.fleet.records import FleetChange, FleetRecords

__all__ = [
    "FleetChange",
    "FleetModel",
    "FleetRecords",
    "Judge",
    "Problem",
    "Scan",
    "hook_phase",
]
