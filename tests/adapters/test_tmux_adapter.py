"""The tmux adapter on a private server: argument-list commands, literal keys, batches."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.errors import RuneError
from runeconsole.core.pids import pid_alive
from tests.support.polling import wait_until
from tests.support.tmux import printer, sleeper


@pytest.fixture
def tmux(tmux_socket: str) -> Tmux:
    return Tmux(tmux_socket, config_file="/dev/null")


def test_session_runs_argument_list_with_cwd_and_env_without_a_shell(
    tmux: Tmux, tmp_path: Path
) -> None:
    script = "import os; print(os.getcwd(), os.environ['RC_X'], flush=True); input()"
    pane = tmux.new_session(
        "agent", [sys.executable, "-c", script], cwd=tmp_path, env={"RC_X": "$(echo hi);`id`"}
    )
    assert pane.pid and pid_alive(pane.pid)
    assert tmux.has_session("agent") and not tmux.has_session("agen")
    wait_until(lambda: f"{tmp_path} $(echo hi);`id`" in tmux.capture(pane.pane_id))


def test_send_text_is_literal(tmux: Tmux, tmp_path: Path) -> None:
    script = "import sys; line = sys.stdin.readline().strip(); print(f'GOT[{line}]'); input()"
    pane = tmux.new_session("echo", [sys.executable, "-c", script], cwd=tmp_path)
    tmux.send_text(pane.pane_id, "C-c Enter $HOME; `id` ; kill-server")
    screen = wait_until(lambda: "GOT[" in tmux.capture(pane.pane_id) and tmux.capture(pane.pane_id))
    assert "GOT[C-c Enter $HOME; `id` ; kill-server]" in screen


def test_an_argument_ending_in_a_semicolon_is_handed_on_whole_never_run_as_tmux_commands(
    tmux: Tmux, tmp_path: Path
) -> None:
    # tmux's parser ends a command at an argument's trailing ';': unescaped, the words after
    # one would run as tmux commands (here: kill-server, the whole fleet's server).
    script = "import sys, os; print(sys.argv[1:], os.environ['RC_X'], flush=True); input()"
    args = [sys.executable, "-c", script, "fix it;", "kill-server", "a\\;"]
    pane = tmux.new_session("semi", args, cwd=tmp_path, env={"RC_X": "x;"})
    said = "['fix it;', 'kill-server', 'a\\\\;'] x;"
    wait_until(lambda: said in tmux.capture(pane.pane_id))
    tmux.send_text(pane.pane_id, "typed;")
    assert tmux.has_session("semi")


def test_exit_status_stays_readable_and_kill_session(tmux: Tmux, tmp_path: Path) -> None:
    tmux.new_session("fails", [sys.executable, "-c", "raise SystemExit(4)"], cwd=tmp_path)
    tmux.new_session("lives", sleeper(), cwd=tmp_path)
    # The pane reads dead at end-of-file, a moment before its process has exited.
    dead = wait_until(lambda: (p := tmux.pane("fails")) and p.exit_status is not None and p)
    assert dead.exit_status == 4
    assert tmux.panes()["lives"].dead is False
    assert tmux.kill_session("fails") is True
    assert tmux.kill_session("fails") is False
    assert "fails" not in tmux.panes()


def test_capture_many_survives_a_vanished_pane(tmux: Tmux, tmp_path: Path) -> None:
    first = tmux.new_session("one", printer("screen one"), cwd=tmp_path)
    second = tmux.new_session("two", printer("screen two"), cwd=tmp_path)
    wait_until(lambda: "screen two" in tmux.capture(second.pane_id))
    wait_until(lambda: "screen one" in tmux.capture(first.pane_id))
    screens = tmux.capture_many([first.pane_id, "%999", second.pane_id])
    assert set(screens) == {first.pane_id, second.pane_id}
    assert screens[first.pane_id].strip() == "screen one"
    assert screens[second.pane_id].strip() == "screen two"


def test_capture_many_keeps_every_pane_id(tmux: Tmux, tmp_path: Path) -> None:
    """Ids like %8 or %12 must come back intact (tmux runs messages through strftime)."""
    panes = [tmux.new_session(f"s{n}", printer(f"screen {n}"), cwd=tmp_path) for n in range(12)]
    wait_until(lambda: all(f"screen {n}" in tmux.capture(p.pane_id) for n, p in enumerate(panes)))
    screens = tmux.capture_many([pane.pane_id for pane in panes])
    assert {pid: text.strip() for pid, text in screens.items()} == {
        pane.pane_id: f"screen {n}" for n, pane in enumerate(panes)
    }


def test_no_server_means_no_panes(tmux: Tmux) -> None:
    assert tmux.panes() == {}
    assert tmux.has_session("anything") is False


def test_switch_client_outside_tmux_says_how_to_attach(
    tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmux.new_session("agent", sleeper(), cwd=tmp_path)
    monkeypatch.delenv("TMUX", raising=False)
    with pytest.raises(RuneError, match=f"tmux -L {tmux.socket_name} attach-session -t =agent"):
        tmux.switch_client("agent")


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(None)
    assert not pid_alive(2**22 + 12345)


def test_an_unusable_server_is_an_error_not_an_empty_fleet(tmp_path: Path) -> None:
    tmux = Tmux(socket_path=str(tmp_path / ("s" * 150)))  # tmux cannot even connect
    with pytest.raises(RuneError, match="list-panes failed: error connecting"):
        tmux.panes()


def test_look_reads_a_pane_by_id_or_session_in_one_process(tmux: Tmux, tmp_path: Path) -> None:
    pane = tmux.new_session("shown", printer("on screen"), cwd=tmp_path)
    wait_until(lambda: "on screen" in tmux.capture(pane.pane_id))
    by_id, by_session = tmux.look(pane.pane_id), tmux.look("=shown:")
    assert by_id == by_session
    assert by_id is not None
    assert (by_id.pane_id, by_id.pid, by_id.dead) == (pane.pane_id, pane.pid, False)
    assert "on screen" in by_id.screen
    assert tmux.look("%999") is None and tmux.look("=nosuch:") is None


def test_look_without_a_server_is_none(tmux: Tmux) -> None:
    assert tmux.look("%0") is None


def test_paste_is_one_bracketed_paste_then_enter_even_in_copy_mode(
    tmux: Tmux, tmp_path: Path
) -> None:
    log = tmp_path / "read.log"
    command = [sys.executable, "-m", "tests.support.paste_reader", str(log)]
    pane = tmux.new_session("reader", command, cwd=Path.cwd())
    wait_until(log.exists)
    tmux.server.cmd("copy-mode", target=pane.pane_id)  # someone scrolling the pane
    tmux.paste(pane.pane_id, "two\nlines; `id` $(x)")
    wait_until(lambda: log.read_bytes().endswith(b"\r"))
    assert log.read_bytes() == b"\x1b[200~two\rlines; `id` $(x)\x1b[201~\r"
