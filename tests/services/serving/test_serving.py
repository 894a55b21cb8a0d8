"""The served console's decisions, without a server: the token file, the verdict on a
request, the slowing of wrong guesses, the bind policy, the record notifications link to."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.serving.access import FORBIDDEN, OK, UNAUTHORIZED, Access, origin_of
from runeconsole.services.serving.bind import plan_bind
from runeconsole.services.serving.record import announced, served_url
from runeconsole.services.serving.throttle import FailureThrottle
from runeconsole.services.serving.token import TOKEN_NAME, load_or_create_token

# -- the token ------------------------------------------------------------------------------


def test_the_token_is_made_once_kept_0600_and_the_same_on_every_start(tmp_path: Path) -> None:
    token = load_or_create_token(tmp_path / "state")
    assert len(token) >= 43
    assert (tmp_path / "state" / TOKEN_NAME).stat().st_mode & 0o777 == 0o600
    assert load_or_create_token(tmp_path / "state") == token


def test_servers_started_at_once_agree_on_one_token(tmp_path: Path) -> None:
    tokens: list[str] = []
    threads = [
        threading.Thread(target=lambda: tokens.append(load_or_create_token(tmp_path)))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(tokens)) == 1 and len(tokens) == 8


def test_a_token_file_others_may_read_or_that_is_no_token_is_refused(tmp_path: Path) -> None:
    load_or_create_token(tmp_path)
    (tmp_path / TOKEN_NAME).chmod(0o644)
    with pytest.raises(RuneError, match="others may read"):
        load_or_create_token(tmp_path)
    (tmp_path / TOKEN_NAME).chmod(0o600)
    (tmp_path / TOKEN_NAME).write_text("not a token\n")
    with pytest.raises(RuneError, match="not an access token"):
        load_or_create_token(tmp_path)


def test_a_token_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    load_or_create_token(elsewhere)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / TOKEN_NAME).symlink_to(elsewhere / TOKEN_NAME)
    with pytest.raises(RuneError, match="cannot read"):
        load_or_create_token(tmp_path / "state")


# -- the verdict on a request ----------------------------------------------------------------

TOKEN = "t" * 43


def test_the_token_or_its_cookie_lets_a_request_in_and_only_the_token_sets_the_cookie() -> None:
    access = Access(TOKEN)
    assert access.check(query_token=TOKEN, cookie=None) == access.check(
        query_token=TOKEN, cookie="stale"
    )
    assert access.check(query_token=TOKEN, cookie=None).set_cookie
    by_cookie = access.check(query_token=None, cookie=access.cookie_value)
    assert by_cookie.status == OK and not by_cookie.set_cookie
    for query, cookie in ((None, None), ("x" * 43, None), (None, TOKEN), ("", "")):
        assert access.check(query_token=query, cookie=cookie).status == UNAUTHORIZED
    assert TOKEN not in access.cookie_value and TOKEN not in access.cookie_name


def test_two_tokens_make_two_cookie_names_so_two_served_consoles_keep_their_own() -> None:
    assert Access(TOKEN).cookie_name != Access("u" * 43).cookie_name


def test_a_websocket_comes_only_from_the_pages_own_origin_or_a_public_one() -> None:
    access = Access(TOKEN, public_origins=("https://console.example.org/",))
    own = "http://127.0.0.1:8422"

    def verdict(origin: str | None) -> int:
        return access.check(
            query_token=None,
            cookie=access.cookie_value,
            websocket=True,
            origin=origin,
            own_origin=own,
        ).status

    assert verdict("http://127.0.0.1:8422") == OK
    assert verdict("https://console.example.org") == OK
    for foreign in ("http://127.0.0.1:9999", "http://evil.example", "null", "", None):
        assert verdict(foreign) == FORBIDDEN, foreign
    assert access.check(query_token=None, cookie=None, websocket=True, origin=own).status == 401


def test_an_origin_is_a_scheme_and_a_host_and_nothing_else() -> None:
    assert origin_of("HTTP://Host:1/path?q") == "http://host:1"
    for bad in ("javascript:alert(1)", "http://user@host", "ws://host", "host", "http://"):
        assert origin_of(bad) is None, bad


# -- slowing wrong guesses ---------------------------------------------------------------------


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_after_five_free_failures_attempts_wait_for_turns_growing_apart() -> None:
    ticks = Ticks()
    throttle = FailureThrottle(ticks)
    waits = []
    for _ in range(9):
        waits.append(throttle.wait_for_turn("1.2.3.4"))
        throttle.failed("1.2.3.4")
    assert waits == [0, 0, 0, 0, 0, 0, 0.25, 0.75, 1.75]
    assert throttle.wait_for_turn("5.6.7.8") == 0  # another address is not held up


def test_parallel_guesses_gain_nothing_each_waits_its_own_turn() -> None:
    ticks = Ticks()
    throttle = FailureThrottle(ticks)
    for _ in range(7):
        throttle.failed("a")
    # Three attempts arriving at once: one per interval (1 s after seven failures).
    assert [throttle.wait_for_turn("a") for _ in range(3)] == [0, 1.0, 2.0]


def test_a_success_clears_the_address_and_a_quiet_spell_forgives_it() -> None:
    ticks = Ticks()
    throttle = FailureThrottle(ticks)
    for _ in range(8):
        throttle.failed("a")
        throttle.failed("b")
    throttle.passed("a")
    assert throttle.failures("a") == 0 and throttle.wait_for_turn("a") == 0
    ticks.now += 301
    assert throttle.wait_for_turn("b") == 0 and throttle.failures("b") == 0


def test_the_slowest_pace_is_capped() -> None:
    assert FailureThrottle().interval(100) == 8.0


# -- the bind ----------------------------------------------------------------------------------


def test_loopback_binds_freely_and_others_need_tls_or_are_said_loudly() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert plan_bind(host, cert=None, key=None).loopback
    with pytest.raises(InvalidInput, match="--insecure-remote"):
        plan_bind("0.0.0.0", cert=None, key=None)
    with pytest.raises(InvalidInput):
        plan_bind("192.0.2.7", cert=None, key=None)
    assert plan_bind("0.0.0.0", cert="c.pem", key="k.pem").scheme == "https"
    loud = plan_bind("0.0.0.0", cert=None, key=None, insecure_remote=True)
    assert loud.warning and "WITHOUT TLS" in loud.warning and loud.scheme == "http"
    with pytest.raises(InvalidInput, match="go together"):
        plan_bind("127.0.0.1", cert="c.pem", key=None)


# -- the record notifications link to ----------------------------------------------------------


def test_a_running_server_is_announced_and_a_dead_ones_record_ignored(tmp_path: Path) -> None:
    assert served_url([tmp_path]) is None
    with announced(tmp_path, "http://127.0.0.1:8422/"):
        assert served_url([tmp_path / "none", tmp_path]) == "http://127.0.0.1:8422/"
    assert served_url([tmp_path]) is None
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    (tmp_path / "serve.json").write_text(
        f'{{"url": "http://127.0.0.1:1/", "pid": {int(dead.stdout)}}}'
    )
    assert served_url([tmp_path]) is None
    (tmp_path / "serve.json").write_text(f'{{"url": "javascript:x", "pid": {os.getpid()}}}')
    assert served_url([tmp_path]) is None
