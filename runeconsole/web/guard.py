"""The aiohttp middleware in front of every route: the token or its cookie, the Origin of
a WebSocket, the slowing of wrong guesses, and the headers every answer carries.

A request without a valid token gets a bare 401 (no body, no hint); a WebSocket from a
foreign page a bare 403. Nothing of the console (not even its static files) is served
before the check, and no route exists beyond the ones ``app.py`` adds.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web
from aiohttp.typedefs import Middleware

from runeconsole.services.serving.access import FORBIDDEN, TOKEN_PARAMETER, Access
from runeconsole.services.serving.throttle import FailureThrottle

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
COOKIE_DAYS = 30
NONCE = web.RequestKey("nonce", str)  # the page's script nonce (Content-Security-Policy)


def security_headers(nonce: str) -> dict[str, str]:
    return {
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Content-Security-Policy": (
            "default-src 'self'; "
            f"script-src 'self' 'nonce-{nonce}'; "
            "style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; font-src 'self'; connect-src 'self'; "
            "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        ),
    }


def guard(access: Access, throttle: FailureThrottle, *, secure: bool) -> Middleware:
    """The middleware; ``secure``: the cookie travels over HTTPS only."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        address = request.remote or "?"
        wait = throttle.wait_for_turn(address)
        if wait:
            await asyncio.sleep(wait)
        upgrade = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        verdict = access.check(
            query_token=request.query.get(TOKEN_PARAMETER),
            cookie=request.cookies.get(access.cookie_name),
            websocket=upgrade,
            origin=request.headers.get(hdrs.ORIGIN),
            own_origin=f"{request.scheme}://{request.host}",
        )
        if not verdict.allowed:
            if verdict.status != FORBIDDEN:
                throttle.failed(address)
            return web.Response(status=verdict.status, headers={"Cache-Control": "no-store"})
        throttle.passed(address)
        request[NONCE] = nonce = secrets.token_urlsafe(16)
        try:
            response = await handler(request)
        except web.HTTPException as refused:  # 404, 405: no route beyond ours
            response = web.Response(status=refused.status)
        if not response.prepared:  # a WebSocket has sent its own headers long since
            response.headers.update(security_headers(nonce))
            if verdict.set_cookie:
                response.set_cookie(
                    access.cookie_name,
                    access.cookie_value,
                    max_age=COOKIE_DAYS * 24 * 3600,
                    path="/",
                    httponly=True,
                    samesite="Strict",
                    secure=secure,
                )
        return response

    return check
