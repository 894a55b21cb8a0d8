"""The escape relay (``tui/support/escape_relay.py``): a lone escape is handed to Textual
as the sequence it reads at once, every other byte as it came; in a real tmux pane the
keys an operator types reach the console intact."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver

from runeconsole.tui.support.escape_relay import (
    LONE_ESCAPE,
    EscapeRelay,
    EscapeRelayDriver,
    with_escape_relay,
)
from tests.support.polling import wait_until


class Relayed:
    """A relay between two pipes, run in a thread: ``type`` writes to its source, ``seen``
    is what reached its sink."""

    def __init__(self, delay: float) -> None:
        self.source_read, self.source_write = os.pipe()
        self.sink_read, self.sink_write = os.pipe()
        self.relay = EscapeRelay(self.source_read, self.sink_write, delay)
        self.thread = threading.Thread(target=self.relay.run, daemon=True)
        self.thread.start()
        self.received = b""

    def type(self, data: bytes) -> None:
        os.write(self.source_write, data)

    def seen(self, expected: bytes) -> bytes:
        def read() -> bool:
            os.set_blocking(self.sink_read, False)
            with suppress(BlockingIOError):
                self.received += os.read(self.sink_read, 4096)
            return len(self.received) >= len(expected)

        wait_until(read, timeout=10, what=f"{expected!r} relayed")
        return self.received

    def close(self) -> None:
        self.relay.stop()
        self.thread.join(timeout=10)
        self.relay.close()
        for fd in (self.source_read, self.source_write, self.sink_read, self.sink_write):
            os.close(fd)


@pytest.fixture
def relayed() -> Iterator[Relayed]:
    relay = Relayed(delay=0.05)
    yield relay
    relay.close()


def test_bytes_that_end_in_no_escape_pass_as_they_came(relayed: Relayed) -> None:
    relayed.type(b"j/12\x1b[A\x1b[6~")
    assert relayed.seen(b"j/12\x1b[A\x1b[6~") == b"j/12\x1b[A\x1b[6~"


def test_a_lone_escape_is_sent_as_the_sequence_that_needs_no_wait(relayed: Relayed) -> None:
    relayed.type(b"x\x1b")
    assert relayed.seen(b"x" + LONE_ESCAPE) == b"x" + LONE_ESCAPE


def test_an_escape_whose_sequence_follows_in_the_next_read_goes_on_in_front_of_it() -> None:
    # A long wait: the rest of the sequence arrives well inside it, so it is one key.
    relayed = Relayed(delay=30)
    try:
        relayed.type(b"\x1b")
        relayed.type(b"[B")
        assert relayed.seen(b"\x1b[B") == b"\x1b[B"
    finally:
        relayed.close()


def test_two_escapes_are_two_keys(relayed: Relayed) -> None:
    relayed.type(b"\x1b\x1b")
    assert relayed.seen(b"\x1b" + LONE_ESCAPE) == b"\x1b" + LONE_ESCAPE


def test_the_relay_ends_with_its_terminal_and_passes_on_the_end() -> None:
    relayed = Relayed(delay=30)
    relayed.type(b"q\x1b")
    os.close(relayed.source_write)
    relayed.thread.join(timeout=10)
    assert not relayed.thread.is_alive()
    assert relayed.seen(b"q\x1b") == b"q\x1b"  # the escape held back is not lost
    relayed.source_write = os.open(os.devnull, os.O_RDONLY)  # for close() to close


def test_the_relay_ends_when_its_reader_has_gone() -> None:
    relayed = Relayed(delay=0.01)
    os.close(relayed.sink_read)
    relayed.type(b"abc")
    relayed.thread.join(timeout=10)
    assert not relayed.thread.is_alive()
    relayed.sink_read = os.open(os.devnull, os.O_RDONLY)


def test_a_stopped_relay_reads_nothing_more_from_its_terminal() -> None:
    relayed = Relayed(delay=30)
    relayed.relay.stop()
    relayed.thread.join(timeout=10)
    assert not relayed.thread.is_alive()
    relayed.type(b"for the program that has the terminal now")
    os.set_blocking(relayed.source_read, False)
    assert os.read(relayed.source_read, 4096) == b"for the program that has the terminal now"


def test_only_textuals_linux_driver_is_given_the_relay() -> None:
    assert with_escape_relay(LinuxDriver) is EscapeRelayDriver
    assert with_escape_relay(HeadlessDriver) is HeadlessDriver


KEYS_APP = """
import sys
from pathlib import Path
from textual.app import App
from runeconsole.tui.support.escape_relay import EscapeRelayDriver

out = Path(sys.argv[1])

class Keys(App):
    def on_key(self, event):
        with out.open("a") as f:
            f.write(event.key + "\\n")
        if event.key == "q":
            self.exit()

Keys(driver_class=EscapeRelayDriver).run()
"""


def test_keys_typed_in_a_real_tmux_pane_reach_the_app_intact(
    tmux_socket: str, tmp_path: Path
) -> None:
    script, out = tmp_path / "keys_app.py", tmp_path / "keys.txt"
    script.write_text(KEYS_APP)
    tmux = ["tmux", "-L", tmux_socket]
    env = [f"-e{k}={os.environ[k]}" for k in ("PYTHONPATH",) if k in os.environ]
    session = ["new-session", "-d", "-x", "80", "-y", "24", "-s", "keys", *env]
    app = [sys.executable, str(script), str(out)]
    subprocess.run(
        [*tmux, "-f", "/dev/null", *session, "-eTERM=xterm-256color", *app],
        check=True,
        timeout=30,
    )
    # The app draws its screen once it is ready for keys.
    wait_until(
        lambda: (
            subprocess.run(
                [*tmux, "display", "-p", "-t", "keys", "#{alternate_on}"],
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
            == "1"
        ),
        what="the app's screen",
    )
    typed = ["x", "Escape", "Up", "y", "Escape", "Escape", "PageDown", "M-a"]
    expected = ["x", "escape", "up", "y", "escape", "escape", "pagedown", "alt+a"]
    for done, key in enumerate(typed, start=1):
        # One key at a time, each seen before the next, as an operator types them.
        subprocess.run([*tmux, "send-keys", "-t", "keys", key], check=True, timeout=10)
        wait_until(lambda done=done: out.exists() and out.read_text().count("\n") >= done)
    subprocess.run([*tmux, "send-keys", "-t", "keys", "q"], check=True, timeout=10)
    wait_until(lambda: out.read_text().splitlines()[-1:] == ["q"], what="q")
    assert out.read_text().splitlines() == [*expected, "q"]
