"""Thousands of malformed context files and checkpoints: no exception leaves the services."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runeconsole.adapters.clock import ManualClock
from runeconsole.core import frontmatter
from runeconsole.core.errors import RuneError
from runeconsole.services.checkpoints import Checkpoints
from runeconsole.services.project import Project
from runeconsole.services.suspension import VERDICTS, GitView, seal, with_resume_count
from tests.support.suspended import ALL_CHECKPOINT_FIXTURES, load_fixture, suspension

CONTEXT = seal(
    "---\n# Context preservation schema v1\ntask_id: 7\nworker: rune-smith-1\n"
    "status: suspended\ntimestamp: 2026-02-26T01:44:00Z\ntimeout_reason: turn_limit\n"
    "files_modified:\n  - src/parser.py\nfiles_pending: []\n"
    'last_action: "parser done"\nresume_count: 0\ncontent_sha256: ""\n---\n\n'
    "### Last Working State\n\nTokenizer split out.\n"
).encode()

NASTY_YAML = [
    b"!!python/object/apply:os.system ['touch /tmp/runeconsole-pwned']",
    b"x: !!python/name:os.system",
    b"a: &a [*a, *a]",
    b"a: &x [1]\nb: [*x, *x, *x, *x]",
    b"[" * 500,
    b"{" * 200 + b"}" * 200,
    b"? [a, b]\n: c",
    b"timestamp: 2026-02-30T99:99:99Z",
    b"resume_count: 99999999999999999999999999",
    b"resume_count: -1",
    b"resume_count: true",
    b"task_id: [1, 2]",
    b"task_id: {a: 1}",
    b"files_modified: [[[]]]",
    b"files_modified: {a: b}",
    b"status: null",
    b"\tindented: tab",
    b"key: 'unterminated",
    b'key: "\\x"',
    b"key: \x00",
    b"\xef\xbb\xbf---",
    b"---\n---\n---",
    b"%YAML 9.9\n---",
    b"!custom tag",
    b"content_sha256: [1]",
    b"last_action: !!binary aGVsbG8=",
    b"worker: 0x1F",
    b"\xff\xfe\xfd",
    "é\u2028\u2029\ufeff".encode(),
]


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif op == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2:
            del data[at : at + rng.randint(1, 40)]
        elif op == 3:
            del data[at:]
        elif op == 4:
            line = data.find(b"\n", at)
            data[at:at] = rng.choice(NASTY_YAML) + b"\n"
            del data[line + 1 : line + 1]
        elif op == 5:
            lines = bytes(data).split(b"\n")
            rng.shuffle(lines)
            data = bytearray(b"\n".join(lines))
        else:
            data[at:at] = rng.choice([b"---", b"\n---\n", b":", b"-", b"[", b'"', b"&a", b"*a"])
    return bytes(data)


@pytest.mark.e2e
def test_context_parser_survives_thousands_of_mutants(tmp_path: Path) -> None:
    rng = random.Random(20260226)
    checking = suspension(tmp_path, ManualClock())
    trusting = suspension(tmp_path, ManualClock(), integrity_check=False)  # reaches later checks
    view = GitView(tmp_path, frozenset({"src/parser.py"}))
    path = tmp_path / "tmp/work/s/context/arc-1/7.md"
    verdicts: set[str] = set()
    for index in range(4000):
        data = mutate_bytes(rng, CONTEXT)
        service = checking if index % 2 else trusting
        record = service.parse(path, data, view)
        assert record.verdict in VERDICTS
        verdicts.add(record.verdict)
        json.dumps(record.to_json())
        record.detail  # noqa: B018 - must not raise
        if record.verdict != "unreadable":
            service.injection(record, record.resume_count + 1, reason="signal")
            with contextlib.suppress(RuneError):  # refusing an unsafe rewrite is allowed
                with_resume_count(data.decode("utf-8"), record.resume_count + 1)
    assert {"ok", "corrupt", "unreadable"} <= verdicts
    assert not Path("/tmp/runeconsole-pwned").exists()


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=400)
    | st.text(max_size=400).map(lambda t: ("---\n" + t).encode("utf-8", "surrogatepass"))
)
def test_context_parser_survives_arbitrary_bytes(tmp_path: Path, data: bytes) -> None:
    record = suspension(tmp_path).parse(tmp_path / "7.md", data, GitView(tmp_path, frozenset()))
    assert record.verdict in VERDICTS
    json.dumps(record.to_json())


# -- checkpoints ---------------------------------------------------------------------------------

JSON_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.5, 10**30, "", "x", "pending", "completed", "timeout",
    "../../etc", "/etc/passwd", "a\0b", "sha256:zz", [], {}, [None], {"status": None},
    {"__proto__": {"status": "completed"}}, "arc-ok", "aabbccddeeff", "999999",
]  # fmt: skip


def nodes(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if len(path) > 12:
        return out
    if isinstance(value, dict):
        for key, child in value.items():
            out += nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += nodes(child, (*path, index))
    return out


def replace_at(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and new is KeyError:
        del parent[path[-1]]
    elif new is not KeyError:
        parent[path[-1]] = new
    return value


def deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def mutate_checkpoint(rng: random.Random, cp: dict[str, Any]) -> bytes:
    for _ in range(rng.randint(1, 5)):
        target = rng.choice(nodes(cp))
        choice = rng.random()
        if choice < 0.15:
            new: Any = KeyError
        elif choice < 0.2:
            new = deep(rng.choice([50, 400, 900]))
        else:
            new = rng.choice(JSON_VALUES)
        cp = replace_at(cp, target, new) if target else cp
    text = json.dumps(cp)
    if rng.random() < 0.2:
        return mutate_bytes(rng, text.encode())
    return text.encode()


@pytest.mark.e2e
def test_checkpoint_pipeline_survives_thousands_of_mutants(tmp_path: Path) -> None:
    rng = random.Random(19)
    clock = ManualClock()
    config = tmp_path / "claude-config"
    service = Checkpoints(
        Project(tmp_path, clock),
        config_dir=config,
        session_pid=4242,
        suspension=suspension(tmp_path, clock),
    )
    view = GitView(tmp_path, frozenset())
    bases = [load_fixture(p) for p in ALL_CHECKPOINT_FIXTURES]
    actions: set[str] = set()
    for _ in range(3000):
        data = mutate_checkpoint(rng, json.loads(json.dumps(rng.choice(bases))))
        plan = service.plan(tmp_path / "checkpoint.json", dry_run=True, view=view, data=data)
        actions.add(plan.action)
        json.dumps(plan.to_json())
        plan.message  # noqa: B018 - must not raise
    assert {"resume", "fresh_start", "blocked"} <= actions
    assert not config.exists()  # a dry run creates nothing


json_trees = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)


PHASE_KEYS = st.sampled_from(["work", "forge", "__proto__", "test", "x"])
TOP_KEYS = st.sampled_from(
    ["schema_version", "session_nonce", "owner_pid", "config_dir", "convergence", "flags",
     "plan_file", "totals"]
)  # fmt: skip


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    phases=st.dictionaries(PHASE_KEYS, json_trees, max_size=5),
    rest=st.dictionaries(TOP_KEYS, json_trees, max_size=6),
)
@pytest.mark.e2e
def test_checkpoint_pipeline_survives_arbitrary_json(
    tmp_path: Path, phases: dict[str, Any], rest: dict[str, Any]
) -> None:
    service = Checkpoints(
        Project(tmp_path, ManualClock()), config_dir=tmp_path / "c", session_pid=1
    )
    cp = {"id": "arc-h", "session_nonce": "aabbccddeeff", "phases": phases, **rest}
    plan = service.plan(tmp_path / "checkpoint.json", dry_run=True, data=json.dumps(cp).encode())
    assert plan.action in ("resume", "complete", "active", "newer", "blocked", "fresh_start")
    json.dumps(plan.to_json())


@pytest.mark.parametrize("depth", [100, 990, 5000, 100000])
def test_deeply_nested_checkpoint(tmp_path: Path, depth: int) -> None:
    service = Checkpoints(
        Project(tmp_path, ManualClock()), config_dir=tmp_path / "c", session_pid=1
    )
    data = (
        b'{"id": "arc-1", "session_nonce": "bad", "phases": {}, "x": '
        + b"[" * depth
        + b"]" * depth
        + b"}"
    )
    plan = service.plan(tmp_path / "checkpoint.json", dry_run=True, data=data)
    assert plan.action in ("blocked", "fresh_start")


# -- the frontmatter fast path reads exactly what PyYAML reads ------------------------------------


def yaml_reading(header: str) -> str:
    """What PyYAML's safe loader makes of ``header`` (repr: ``1`` and ``True`` differ)."""
    try:
        data = yaml.safe_load(header)
    except Exception as exc:
        return f"error {type(exc).__name__}"
    return repr({} if data is None else data)


def assert_fast_path_agrees(header: str) -> bool:
    fast = frontmatter._plain_mapping(header)
    if fast is None:
        return False
    assert repr(fast) == yaml_reading(header), header
    return True


SCALARS = st.sampled_from(
    ["src/parser.py", "a/b:c", "/abs", "./rel", ".hidden", "7", "0", "07", "010", "-1", "+1",
     "1_000", "1.5", "1e3", ".inf", "0x1F", "rune-smith-1",
     "a.b", "_x", "yes", "No", "TRUE", "off", "On", "null", "Null", "~", "y", "n", '""', '"a"',
     '"a: b # c"', '"\\x41"', "'s'", "[]", "[1]", "{}", "2026-02-26T01:44:00Z",
     "2026-02-30T01:44:00Z", "2026-13-01T00:00:00Z", "2026-02-26 01:44:00", "2026-02-26",
     "a b", "a #c", "a:", "", " ", "!tag", "&a", "*a", "-", "? x", "|", ">", "%", "@x", "`x`"]
) | st.text(max_size=12).map(lambda t: f'"{t}"') | st.text(max_size=8)  # fmt: skip
KEYS = st.sampled_from(["task_id", "a", "_k", "on", "yes", "null", "Key", "k-1", "k.1", "1"])
LINES = st.one_of(
    st.tuples(KEYS, SCALARS).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    KEYS.map(lambda k: f"{k}:"),
    SCALARS.map(lambda v: f"  - {v}"),
    SCALARS.map(lambda v: f"- {v}"),
    SCALARS.map(lambda v: f"    - {v}"),
    st.sampled_from(["", "# comment", "  # indented comment", "...", "---", "\t", " ", "\r"]),
    st.text(max_size=10),
)


# Near the plain layout, so that most headers do take the fast path.
NEAR_KEYS = st.sampled_from(["task_id", "a", "_k", "b2", "files_modified", "on", "Key"])
NEAR_SCALARS = st.sampled_from(
    ["7", "0", "07", "rune-smith-1", "src/a.py", "yes", "Off", "y", "[]", '""',
     "2026-02-26T01:44:00Z", "2026-02-30T01:44:00Z", "2026-02-26T24:00:00Z"]
) | st.text(max_size=12).map(lambda t: f'"{t}"') | st.from_regex(
    r"[A-Za-z_0-9./-]{1,10}", fullmatch=True
)  # fmt: skip
NEAR_LINES = st.one_of(
    st.tuples(NEAR_KEYS, NEAR_SCALARS).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.tuples(NEAR_KEYS, st.lists(NEAR_SCALARS, max_size=3)).map(
        lambda block: "\n".join([f"{block[0]}:", *(f"  - {v}" for v in block[1])])
    ),
    st.sampled_from(["", "# comment"]),
)


@settings(max_examples=2000, deadline=None)
@given(lines=st.lists(LINES, max_size=8) | st.lists(NEAR_LINES, max_size=10))
@pytest.mark.e2e
def test_the_fast_path_reads_what_pyyaml_reads(lines: list[str]) -> None:
    assert_fast_path_agrees("\n".join(lines) + "\n")
    assert_fast_path_agrees("\n".join(lines))


@pytest.mark.e2e
def test_the_fast_path_agrees_on_thousands_of_mutated_headers() -> None:
    rng = random.Random(3)
    taken = 0
    for _ in range(4000):
        text = mutate_bytes(rng, CONTEXT).decode("utf-8", "replace")
        with contextlib.suppress(frontmatter.FrontmatterError):
            taken += assert_fast_path_agrees(frontmatter.split(text).header)
    assert taken > 50  # most mutants leave the plain layout; those that keep it agree too
    assert assert_fast_path_agrees(frontmatter.split(CONTEXT.decode()).header)
