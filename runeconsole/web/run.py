"""Run the served console until SIGINT or SIGTERM: listen (with TLS when given), tell the
operator where (``on_ready`` with the bound URL), and close every browser session's
console on the way out."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
from collections.abc import Callable

from aiohttp import web

from runeconsole.core.errors import RuneError
from runeconsole.services.serving.bind import BindPlan
from runeconsole.web.app import ServedConsole

SHUTDOWN_SECONDS = 10.0


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise RuneError(f"--tls-cert {cert} / --tls-key {key}: {exc}") from exc
    return context


def url_host(host: str) -> str:
    """The host as a URL names it: a wildcard bind by this machine's name, IPv6 bracketed."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    return f"[{host}]" if ":" in host else host


async def serve(
    console: ServedConsole,
    plan: BindPlan,
    port: int,
    *,
    tls: ssl.SSLContext | None,
    on_ready: Callable[[str], None],
) -> None:
    """Serve until SIGINT or SIGTERM (run it with ``asyncio.run``)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    # No access log: the first request of a session carries the token in its query.
    runner = web.AppRunner(
        console.application(), access_log=None, shutdown_timeout=SHUTDOWN_SECONDS
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, plan.host, port, ssl_context=tls, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            raise RuneError(f"cannot listen on {plan.host}:{port}: {exc.strerror or exc}") from exc
        bound = runner.addresses[0][1]
        on_ready(f"{plan.scheme}://{url_host(plan.host)}:{bound}/")
        await stop.wait()
    finally:
        with contextlib.suppress(Exception):
            await runner.cleanup()
