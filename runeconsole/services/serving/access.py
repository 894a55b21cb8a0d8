"""Who may use the served console: the token, exchanged for a cookie, and the Origin of a
WebSocket.

Every request must carry the token, either as ``?token=`` (the link printed on start) or
as the cookie that link leaves behind. The cookie holds a value derived from the token
(an HMAC), never the token itself, and is named after the token too, so two consoles
served on one host (different ports share a browser's cookies) never take each other's
place. A WebSocket must also come from the page's own origin: a page elsewhere that a
browser with the cookie visits cannot drive the console.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import urlsplit

TOKEN_PARAMETER = "token"
OK, UNAUTHORIZED, FORBIDDEN = 200, 401, 403


@dataclass(frozen=True)
class Verdict:
    status: int  # OK, UNAUTHORIZED or FORBIDDEN
    set_cookie: bool = False  # the token came in the query: leave the cookie behind

    @property
    def allowed(self) -> bool:
        return self.status == OK


def _derive(token: str, purpose: bytes) -> str:
    return hmac.new(token.encode(), purpose, hashlib.sha256).hexdigest()


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a URL, lower-cased; ``None`` for anything else."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


class Access:
    def __init__(self, token: str, public_origins: tuple[str, ...] = ()) -> None:
        self._token = token
        self.cookie_name = f"runeconsole-{_derive(token, b'cookie name')[:12]}"
        self.cookie_value = _derive(token, b"session cookie")
        self.public_origins = frozenset(o for o in map(origin_of, public_origins) if o)

    def check(
        self,
        *,
        query_token: str | None,
        cookie: str | None,
        websocket: bool = False,
        origin: str | None = None,
        own_origin: str | None = None,
    ) -> Verdict:
        """The verdict on one request. ``own_origin``: ``scheme://Host`` as the request
        came (the page a WebSocket may come from)."""
        by_query = query_token is not None and hmac.compare_digest(
            query_token.encode(), self._token.encode()
        )
        by_cookie = cookie is not None and hmac.compare_digest(
            cookie.encode(), self.cookie_value.encode()
        )
        if not (by_query or by_cookie):
            return Verdict(UNAUTHORIZED)
        if websocket and not self.origin_allowed(origin, own_origin):
            return Verdict(FORBIDDEN)
        return Verdict(OK, set_cookie=by_query and not by_cookie)

    def origin_allowed(self, origin: str | None, own_origin: str | None) -> bool:
        seen = origin_of(origin) if origin else None
        if seen is None:
            return False
        allowed = set(self.public_origins)
        if own_origin:
            allowed.add(own_origin.lower())
        return seen in allowed
