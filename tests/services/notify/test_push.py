"""``runeconsole.notify.urls``: Apprise URLs, sent from a process of their own (the hook
never waits for the network), with the served console's link when one runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.core.config import Talisman
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge.settings import ClaudeSettings, notifier_for
from runeconsole.services.notify import LOG_NAME, Notifier
from runeconsole.services.serving.record import announced
from tests.support.claude import Bridge
from tests.support.polling import wait_until
from tests.support.push_endpoint import push_endpoint

pytest.importorskip("apprise")
pytestmark = pytest.mark.timeout(120)


def set_urls(root: Path, urls: object) -> None:
    talisman = root / ".claude" / "talisman.yml"
    talisman.parent.mkdir(parents=True, exist_ok=True)
    talisman.write_text("runeconsole:\n  notify:\n    urls: " + json.dumps(urls) + "\n")


@pytest.mark.e2e
def test_apprise_delivers_the_notification_to_a_local_endpoint(project: Path) -> None:
    with push_endpoint() as endpoint:
        notifier = Notifier(ProjectPaths(project), None, urls=[endpoint.url])
        assert notifier.notify("worker-a", "worker-a asks", "Which parser?")
        [received] = wait_until(lambda: endpoint.received, what="the push")
    assert (received["title"], received["message"]) == ("worker-a asks", "Which parser?")


@pytest.mark.e2e
def test_while_a_served_console_runs_the_notification_links_to_it(project: Path) -> None:
    paths = ProjectPaths(project)
    with push_endpoint() as endpoint, announced(paths.state, "http://127.0.0.1:8422/"):
        Notifier(paths, None, urls=[endpoint.url]).notify("worker-a", "worker-a crashed", "exit 3")
        [received] = wait_until(lambda: endpoint.received, what="the push")
    assert received["message"] == "exit 3\nhttp://127.0.0.1:8422/"
    assert "token" not in received["message"]


@pytest.mark.e2e
def test_a_permission_prompt_reaches_the_urls_through_the_hook(hooked: Bridge) -> None:
    with push_endpoint() as endpoint:
        set_urls(hooked.project, [endpoint.url])
        hooked.send("SessionStart")
        result = hooked.send("Notification")
        assert (result.exit_code, result.stdout) == (0, "")
        [received] = wait_until(lambda: endpoint.received, what="the push")
    assert received["title"].endswith("needs your permission")


@pytest.mark.e2e
def test_a_url_apprise_cannot_use_is_logged_without_the_url(project: Path) -> None:
    paths = ProjectPaths(project)
    Notifier(paths, None, urls=["nosuchscheme://secret-token@host"]).notify("a", "t", "b")
    log = paths.state / LOG_NAME
    line = wait_until(lambda: log.exists() and log.read_text(), what="the log line")
    assert "URL 1 is not one Apprise knows" in line and "secret" not in line


def test_urls_that_are_not_a_list_of_urls_are_reported_without_their_text(project: Path) -> None:
    set_urls(project, "tgram://123456:SECRET/chat")
    settings = ClaudeSettings.from_talisman(Talisman.load(project, strict=False))
    assert settings.notify_urls is None
    assert any("notify.urls" in p and "SECRET" not in p for p in settings.problems)
    set_urls(project, ["ntfy://topic"])
    assert notifier_for(ProjectPaths(project)).urls == ["ntfy://topic"]
