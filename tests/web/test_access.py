"""Nobody else gets in: the served console over real HTTP and WebSocket connections."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import pytest

from runeconsole.services.serving.access import Access
from tests.support.served import Served, root_args, serving


def status(url: str, headers: dict[str, str] | None = None, context=None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def cookie(served: Served) -> dict[str, str]:
    access = Access(served.token)
    return {"Cookie": f"{access.cookie_name}={access.cookie_value}"}


def handshake(served: Served, headers: dict[str, str]) -> int:
    """The status a WebSocket handshake to /ws gets (101: upgraded, then closed)."""

    async def attempt() -> int:
        async with aiohttp.ClientSession() as client:
            try:
                socket = await client.ws_connect(served.url + "ws", headers=headers)
            except aiohttp.WSServerHandshakeError as refused:
                return refused.status
            await socket.close()
            return 101

    return asyncio.run(attempt())


def test_without_the_token_every_path_gets_a_bare_401(served: Served) -> None:
    for path in ("", "static/js/textual.js", "ws", "download/x", "nope", "?token=wrong"):
        assert status(served.url + path) == (401, b""), path
    wrong = {"Cookie": f"{Access(served.token).cookie_name}=0123"}
    assert status(served.url, wrong) == (401, b"")


def test_the_token_is_swapped_for_a_cookie_and_no_other_route_is_served(served: Served) -> None:
    request = urllib.request.Request(served.link)
    with urllib.request.urlopen(request, timeout=30) as response:
        set_cookie = response.headers["Set-Cookie"]
        assert response.headers["X-Frame-Options"] == "DENY"
        assert b"textual.js" in response.read()
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    assert served.token not in set_cookie  # a value derived from it, never the token
    assert status(served.url, cookie(served))[0] == 200
    assert status(served.url + "static/js/textual.js", cookie(served))[0] == 200
    for path in ("download/x", "static/", "nope"):
        assert status(served.url + path, cookie(served))[0] in (403, 404), path


def test_a_websocket_needs_the_token_and_the_pages_own_origin(served: Served) -> None:
    assert handshake(served, {"Origin": served.origin}) == 401
    assert handshake(served, {**cookie(served), "Origin": "http://evil.example"}) == 403
    assert handshake(served, cookie(served)) == 403  # no Origin: not a page of ours
    assert handshake(served, {**cookie(served), "Origin": served.origin}) == 101


def test_repeated_wrong_tokens_are_answered_more_and_more_slowly(served: Served) -> None:
    began = time.monotonic()
    for _ in range(5):
        assert status(served.url + "?token=guess")[0] == 401
    free = time.monotonic() - began
    began = time.monotonic()
    for _ in range(4):  # the 6th to 9th wrong guesses: turns 0, 0.25, 0.5, 1 s apart
        assert status(served.url + "?token=guess")[0] == 401
    slowed = time.monotonic() - began
    assert slowed >= 1.7 > free
    assert status(served.link)[0] == 200  # the right token still gets in (in its turn)


def test_a_non_loopback_address_is_refused_without_tls(project: Path, run_cli) -> None:
    refused = run_cli("serve", "--root", str(project), "--host", "0.0.0.0")
    assert refused.returncode == 2
    assert "--tls-cert" in refused.stderr and "--insecure-remote" in refused.stderr
    assert refused.stdout == ""


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl makes the test certificate")
def test_with_tls_it_serves_https_and_the_cookie_travels_only_over_it(
    project: Path, tmp_path: Path
) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.create_default_context(cafile=str(cert))
    args = ("--tls-cert", str(cert), "--tls-key", str(key))
    with serving(*root_args(project), *args) as served:
        assert served.url.startswith("https://127.0.0.1:")
        assert status(served.url, context=context)[0] == 401
        request = urllib.request.Request(served.link)
        with urllib.request.urlopen(request, timeout=30, context=context) as response:
            assert "Secure" in response.headers["Set-Cookie"]


def test_a_public_url_for_a_proxy_is_printed_and_its_pages_may_open_the_websocket(
    project: Path,
) -> None:
    public = "https://console.example.test"
    with serving(*root_args(project), "--public-url", public + "/") as served:
        assert served.url == public + "/"
        bound = json.loads((project / ".claude" / "state" / "serve.json").read_text())
        assert bound["url"] == public + "/"
        local = Served(served.process, served.listening, served.link)
        assert handshake(local, {**cookie(served), "Origin": public}) == 101
        assert handshake(local, {**cookie(served), "Origin": "https://other.test"}) == 403


def test_insecure_remote_serves_off_loopback_and_says_so_loudly(project: Path) -> None:
    with serving(*root_args(project), "--host", "0.0.0.0", "--insecure-remote") as served:
        port = served.url.rsplit(":", 1)[1]
        assert status(f"http://127.0.0.1:{port}")[0] == 401
        served.process.terminate()
        served.process.wait(timeout=30)
        assert "WITHOUT TLS" in (served.process.stderr.read() if served.process.stderr else "")
