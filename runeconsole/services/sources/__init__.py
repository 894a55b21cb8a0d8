"""Sources of a fleet file beyond the local root: remote projects followed over SSH
(``remote``) and the actions routed to them (``actions``)."""

from runeconsole.services.claude.permissions.service import Verdict
from runeconsole.services.sources.actions import LocalActions, RemoteActions, Unreachable
from runeconsole.services.sources.remote import CONNECTING, DOWN, UP, RemoteSource, SourceStatus

__all__ = [
    "CONNECTING",
    "DOWN",
    "UP",
    "LocalActions",
    "RemoteActions",
    "RemoteSource",
    "SourceStatus",
    "Unreachable",
    "Verdict",
]
