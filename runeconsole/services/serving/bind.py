"""Which address the server may listen on: loopback freely; anything else only with TLS,
or when the operator says ``--insecure-remote`` (and is told loudly what that means)."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

from runeconsole.core.errors import InvalidInput

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {str(entry[4][0]) for entry in found}
    return bool(addresses) and all(
        ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses
    )


@dataclass(frozen=True)
class BindPlan:
    host: str
    tls: bool
    loopback: bool
    warning: str | None = None  # said loudly on start: a remote bind without TLS

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"


def plan_bind(
    host: str, *, cert: str | None, key: str | None, insecure_remote: bool = False
) -> BindPlan:
    """The plan for ``host``, or ``InvalidInput`` saying why it may not be bound."""
    if bool(cert) != bool(key):
        raise InvalidInput("--tls-cert and --tls-key go together: give both, or neither")
    tls = bool(cert)
    loopback = is_loopback(host)
    if loopback or tls:
        return BindPlan(host, tls, loopback)
    if not insecure_remote:
        raise InvalidInput(
            f"--host {host} is reachable from other machines: the token and every answer "
            "would cross the network in clear text. Give --tls-cert and --tls-key, reach "
            "the console over an SSH tunnel (docs/fleet.md#the-console-in-a-browser-and-on-"
            "a-phone), or accept the risk with --insecure-remote"
        )
    warning = (
        f"WARNING: serving on {host} WITHOUT TLS (--insecure-remote). Anyone on the network "
        "path can read the access token and everything the console shows, and act with it. "
        "Use this only on a network you trust completely (a private VPN)."
    )
    return BindPlan(host, tls, loopback, warning)
