"""The fleet file: sources read with safe_load and every field checked before use."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput
from runeconsole.core.fleet_file import SourceSpec, default_fleet_path, load_fleet, parse_fleet

EXAMPLE = """
sources:
  - name: api
    root: ~/src/api
  - name: build1
    host: dev@build1.example
    root: /srv/work/web
    command: [/opt/rc/bin/python, -m, runeconsole]
    ssh: [ssh, -F, ~/work/ssh_config]
"""


def test_a_fleet_file_lists_local_and_remote_sources_with_their_defaults() -> None:
    local, remote = parse_fleet(EXAMPLE)
    assert local == SourceSpec("api", "~/src/api")
    assert local.local and local.command == ("runeconsole",) and local.ssh == ("ssh",)
    assert local.local_root() == Path.home() / "src" / "api"
    assert not remote.local
    assert remote.host == "dev@build1.example"
    assert remote.command == ("/opt/rc/bin/python", "-m", "runeconsole")
    assert remote.ssh == ("ssh", "-F", str(Path.home() / "work" / "ssh_config"))


def test_a_bare_list_of_sources_is_read_too_and_a_single_word_command_is_a_list() -> None:
    (source,) = parse_fleet("- {name: a, root: /r, host: h, command: /usr/bin/runeconsole}")
    assert source.command == ("/usr/bin/runeconsole",)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "non-empty list of sources"),
        ("sources: []", "non-empty list of sources"),
        ("sources: [1]", "expected a mapping"),
        ("hosts: []", "unknown key 'hosts'"),
        ("- {root: /r}", "'name' is missing"),
        ("- {name: a/b, root: /r}", "'a/b' is not allowed"),
        ("- {name: '..', root: /r}", "is not allowed"),
        ("- {name: a, root: /r}\n- {name: a, root: /s}", "two sources are named 'a'"),
        ("- {name: a}", "'root' must be a path"),
        ("- {name: a, root: /r, colour: red}", "unknown field 'colour'"),
        ("- {name: a, root: /r, host: -oProxyCommand=evil}", "is not a host name"),
        ("- {name: a, root: /r, host: 'a b'}", "is not a host name"),
        ("- {name: a, root: relative, host: h}", "must be absolute"),
        ("- {name: a, root: /r, host: h, command: []}", "non-empty list of words"),
        ("- {name: a, root: /r, host: h, command: 'rc; rm -rf /' }", None),
        ("- {name: a, root: /r, host: h, ssh: [ssh, 3]}", "3 is not a word"),
        ("- {name: a, root: /r, ssh: [ssh]}", "only for a source with a 'host'"),
        ("- {name: a, root: /r\n  bad", "not valid YAML"),
        ("!!python/object/apply:os.system [echo]", "not valid YAML"),
    ],
)
def test_a_mistake_in_the_fleet_file_is_refused_with_where_and_why(
    text: str, says: str | None
) -> None:
    if says is None:  # a command is one word, never a shell string: accepted as that word
        (source,) = parse_fleet(text)
        assert source.command == ("rc; rm -rf /",)
        return
    with pytest.raises(InvalidInput, match="fleet file") as caught:
        parse_fleet(text)
    assert says in caught.value.message


def test_a_missing_fleet_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such fleet file"):
        load_fleet(tmp_path / "fleet.yml")
    path = tmp_path / "fleet.yml"
    path.write_text("- {name: here, root: /x}\n")
    assert [s.name for s in load_fleet(path)] == ["here"]


def test_a_relative_root_of_this_machine_is_the_fleet_file_s_wherever_it_is_read_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "conf").mkdir()
    path = tmp_path / "conf" / "fleet.yml"
    path.write_text(
        "- {name: near, root: ../alpha}\n- {name: home, root: ~/beta}\n"
        "- {name: far, host: build1, root: /srv/gamma}\n"
    )
    monkeypatch.chdir("/")
    near, home, far = load_fleet(path)
    assert near.local_root() == tmp_path / "conf" / ".." / "alpha"
    assert home.root == "~/beta" and far.root == "/srv/gamma"


def test_the_default_fleet_file_is_under_the_config_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_fleet_path() == tmp_path / "runeconsole" / "fleet.yml"
