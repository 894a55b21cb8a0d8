"""The conversation index (issue 33): from cold, an append, a query, the CLI.

A project of ``--sessions`` transcripts holding ``--megabytes`` of JSONL between them, as
Claude Code writes them (compact JSON, one record a line): the user's prompts, the
assistant's text, tool calls (Bash, Read, Edit, Grep) with their results (code, test
output, logs with ids and numbers: a vocabulary of many thousand words, some unique), and
between them the records the console does not show (attachments, API request shapes,
queue operations), about half of the bytes as in the real transcript of
``tests/fixtures/claude_transcripts/``. Each session belongs to an agent (its identity
names its transcript), in Claude Code's projects directory of the root (a private
``CLAUDE_CONFIG_DIR``).

1. Index from cold: ``ConversationIndex.rescan()`` over an empty database (goal <= 60 s
   for 2,000 sessions, 1 GB, on a 2-core machine).
2. An append of 100 KB to one transcript, indexed by ``feed`` (goal <= 20 ms): the p95 of
   ``--appends``.
3. A query with ten snippets (words, a phrase, a prefix, filters), on an open index:
   p95 of ``--queries`` each (goal <= 100 ms).
4. ``runeconsole search QUERY --limit 10`` as a process, start to exit (goal <= 300 ms).

    python benchmarks/conversation_index.py [--sessions 2000] [--megabytes 1000]
        [--appends 30] [--queries 30] [--cli-runs 15] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm, load, scratch, summary

from runeconsole.adapters import git

REPO = Path(__file__).resolve().parents[1]
COMMON = (
    "the migration table users index schema commit branch worktree test failed passed "
    "error warning function class module import return value config settings request response "
    "handler session token cache query database column row field record update insert "
    "delete select where join order limit offset parse render widget console agent "
    "fleet review merge queue rebase conflict resolve lint format type check build "
    "deploy release version upgrade downgrade alembic postgres sqlite redis kafka docker "
    "kubernetes "
    "pod service port timeout retry backoff lock thread process signal pipe socket "
    "stream buffer chunk line file path directory read write open close flush "
    "sync async await future promise task "
)
WORDS = COMMON.split()
SYLLABLES = ("ka", "lo", "mi", "ra", "tu", "ve", "si", "no", "pa", "ze", "xi", "qu")


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    """Common words first, then made-up identifiers (a Zipf-like choice favours the first)."""
    made = {
        "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        + rng.choice(["", "_id", "er", "s", "_v2", "Config", "Error"])
        for _ in range(size)
    }
    return WORDS + sorted(made)


class Writer:
    """Realistic records, fast: texts drawn from a pool made once, varied by ids."""

    def __init__(self, seed: int = 33) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        weights = [1 / (rank + 8) for rank in range(len(self.words))]
        self.sentences = [self._sentence(weights) for _ in range(3000)]
        self.code = [self._code() for _ in range(400)]

    def _sentence(self, weights: list[float]) -> str:
        chosen = self.rng.choices(self.words, weights, k=self.rng.randint(6, 22))
        return " ".join(chosen).capitalize() + "."

    def _code(self) -> str:
        lines = []
        for n in range(self.rng.randint(20, 120)):
            name = self.rng.choice(self.words[100:])
            lines.append(f"    {name} = compute_{name}({n}, {self.rng.choice(self.words)!r})")
        return "def handler():\n" + "\n".join(lines)

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.rng.choice(self.sentences) for _ in range(sentences))

    def unique(self) -> str:
        return f"{uuid.uuid4().hex[:12]} run {self.rng.randint(1, 10**6)}"


def session_lines(writer: Writer, session: str, target: int, start: datetime) -> list[bytes]:
    rng = writer.rng
    lines: list[bytes] = []
    size, moment, calls, parent = 0, start, 0, None

    def put(record: dict[str, object]) -> None:
        nonlocal size
        data = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        lines.append(data)
        size += len(data)

    def base(kind: str) -> dict[str, object]:
        nonlocal moment, parent
        moment += timedelta(seconds=rng.uniform(0.5, 40))
        made = str(uuid.uuid4())
        record: dict[str, object] = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "uuid": made,
            "timestamp": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "sessionId": session,
            "cwd": "/srv/project",
            "version": "2.1.328",
            "gitBranch": "main",
        }
        parent = made
        return record

    while size < target:
        if rng.random() < 0.15 or not lines:
            record = base("user")
            record["message"] = {"role": "user", "content": writer.paragraph(rng.randint(1, 5))}
            put(record)
        # What the console does not show: about half of the bytes.
        put(
            {
                "type": "attachment",
                "sessionId": session,
                "attachment": {"type": "hook_context", "content": writer.paragraph(6)},
            }
        )
        put(
            {
                "type": "api-request-shape",
                "sessionId": session,
                "shape": {"system": writer.paragraph(8), "tools": writer.words[:60]},
            }
        )
        record = base("assistant")
        if rng.random() < 0.35:
            content = [{"type": "text", "text": writer.paragraph(rng.randint(2, 10))}]
            record["message"] = {"role": "assistant", "content": content}
            put(record)
            continue
        calls += 1
        call = f"toolu_{uuid.uuid4().hex[:24]}"
        tool = rng.choice(["Bash", "Bash", "Read", "Edit", "Grep"])
        if tool == "Bash":
            tool_input = {
                "command": f"pytest -q tests/{rng.choice(writer.words)}",
                "description": "Run",
            }
            output = writer.paragraph(rng.randint(4, 30)) + "\n" + writer.unique()
        elif tool == "Read":
            tool_input = {"file_path": f"/srv/project/src/{rng.choice(writer.words)}.py"}
            output = rng.choice(writer.code)
        elif tool == "Edit":
            tool_input = {
                "file_path": f"/srv/project/src/{rng.choice(writer.words)}.py",
                "old_string": rng.choice(writer.code)[:400],
                "new_string": rng.choice(writer.code)[:400],
            }
            output = "The file has been updated."
        else:
            tool_input = {"pattern": rng.choice(writer.words), "path": "/srv/project"}
            output = "\n".join(f"src/{rng.choice(writer.words)}.py:{n}" for n in range(20))
        use: dict[str, object] = {"type": "tool_use", "id": call, "name": tool}
        use["input"] = tool_input
        record["message"] = {"role": "assistant", "content": [use]}
        put(record)
        result = base("user")
        result["message"] = {
            "role": "user",
            "content": [{"tool_use_id": call, "type": "tool_result", "content": output}],
        }
        result["toolUseResult"] = {"stdout": output[:2000], "stderr": "", "interrupted": False}
        put(result)
    return lines


def make_root(base: Path, sessions: int, megabytes: float) -> tuple[Path, Path, list[Path]]:
    """The project root, the Claude config dir, and the transcripts."""
    from runeconsole.services.conversations.locate import project_dir_name

    root = base / "project"
    git.init_repo(root)
    config = base / "claude-config"
    folder = config / "projects" / project_dir_name(root.resolve())
    folder.mkdir(parents=True)
    identities = root / ".claude" / "state" / "identities"
    identities.mkdir(parents=True)
    writer = Writer()
    per_session = int(megabytes * 1e6 / sessions)
    start = datetime(2026, 9, 1, tzinfo=UTC)
    paths = []
    for n in range(sessions):
        session = str(uuid.UUID(int=writer.rng.getrandbits(128), version=4))
        path = folder / f"{session}.jsonl"
        moment = start + timedelta(hours=n * 0.5)
        size = int(per_session * writer.rng.uniform(0.3, 1.7))
        path.write_bytes(b"".join(session_lines(writer, session, size, moment)))
        paths.append(path)
        key = f"worker-w{n:05d}"
        body = {
            "agent_id": f"{key}-20260901T000000Z",
            "role": "worker" if n % 4 else "reviewer",
            "name": f"w{n:05d}",
            "status": "terminated",
            "claude": {"session_id": session, "transcript_path": str(path)},
        }
        (identities / f"{key}.json").write_text(json.dumps(body))
    return root, config, paths


QUERIES: list[tuple[str, str, dict[str, Any]]] = [
    ("a common word", "migration", {}),
    ("two words", "postgres timeout", {}),
    ("a phrase", '"PHRASE"', {}),
    ("a prefix", "kub*", {}),
    ("a rare word", "zzunfound", {}),
    ("an agent's", "database", {"agent": "worker-w00007"}),
    ("a tool's", "failed", {"tool": "Bash"}),
    ("since", "schema", {"since": datetime(2026, 10, 1, tzinfo=UTC)}),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--megabytes", type=float, default=1000.0)
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--cli-runs", type=int, default=15)
    parser.add_argument(
        "--dir", type=Path, help="make the root here and keep it (a root made before is reused)"
    )
    args = parser.parse_args()
    end_cleanly_on_sigterm()
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
        return run(args, args.dir)
    with scratch("conversation-index") as base:
        return run(args, base)


def run(args: argparse.Namespace, base: Path) -> int:
    started = time.monotonic()
    if (base / "project").is_dir():  # made before (--dir): the same transcripts, a cold index
        root, config = base / "project", base / "claude-config"
        paths = sorted(config.glob("projects/*/*.jsonl"))
        for made in (root / ".claude" / "state").glob("conversations.sqlite*"):
            made.unlink()
    else:
        root, config, paths = make_root(base, args.sessions, args.megabytes)
    os.environ["CLAUDE_CONFIG_DIR"] = str(config)
    total = sum(p.stat().st_size for p in paths)
    print(
        f"{len(paths):,} sessions, {total / 1e6:,.0f} MB of JSONL made in "
        f"{time.monotonic() - started:.0f} s; {load()}",
        flush=True,
    )

    from runeconsole.services.conversations.index import ConversationIndex
    from runeconsole.services.project import Project

    project = Project(root)
    index = ConversationIndex(project)
    cpu0 = time.process_time()
    report = index.rescan()
    cpu = time.process_time() - cpu0
    database = index.path.stat().st_size
    print(
        f"index from cold: {report.seconds:.1f} s, {report.bytes / 1e6 / report.seconds:,.0f} MB/s "
        f"({report.summary()}; CPU {cpu:.1f} s; database {database / 1e6:,.0f} MB)  (goal <= 60 s)",
        flush=True,
    )

    writer = Writer(seed=7)
    target = paths[len(paths) // 2]
    session = target.stem
    millis = []
    moment = datetime(2027, 1, 1, tzinfo=UTC)
    for n in range(args.appends):
        data = b"".join(session_lines(writer, session, 100_000, moment + timedelta(hours=n)))
        with open(target, "ab") as stream:
            stream.write(data)
        t0 = time.perf_counter()
        indexed = index.feed(target)
        millis.append((time.perf_counter() - t0) * 1000)
        assert indexed > 0
    print(summary(f"an append of ~100 KB fed ({len(data):,} bytes)", millis, "<= 20 ms"))
    t0 = time.perf_counter()
    merged = index.tidy(10.0)
    print(
        f"  then FTS5's segments merged (tidy, in the rescan's worker): "
        f"{time.perf_counter() - t0:.2f} s{'' if merged else ' (10 s budget used, more left)'}",
        flush=True,
    )

    words = Writer().sentences[0].rstrip(".").lower().split()
    phrase = f'"{words[0]} {words[1]}"'  # two words of the pool's first sentence, in order
    fresh = ConversationIndex(project)
    fresh.search("warmup")
    every = []
    for label, query, filters in QUERIES:
        times = []
        found = 0
        query = phrase if query == '"PHRASE"' else query
        for _ in range(args.queries):
            t0 = time.perf_counter()
            hits = fresh.search(query, limit=10, **filters)
            times.append((time.perf_counter() - t0) * 1000)
            found = len(hits)
        every += times
        print(summary(f"  query {label} {query!r} ({found} hits)", times, "<= 100 ms"))
    print(summary("a query with ten snippets, all kinds", every, "p95 <= 100 ms"), flush=True)

    env = dict(os.environ, PYTHONPATH=str(REPO))
    runs = []
    for n in range(args.cli_runs):
        query = ["migration", phrase, "kub*"][n % 3]
        argv = [sys.executable, "-m", "runeconsole", "search", query, "--limit", "10"]
        t0 = time.perf_counter()
        done = subprocess.run(
            [*argv, "--root", str(root)], env=env, capture_output=True, text=True, check=False
        )
        runs.append((time.perf_counter() - t0) * 1000)
        assert done.returncode in (0, 1), done.stderr  # 1: nothing found
    print(summary("runeconsole search QUERY --limit 10 (a process)", runs, "p95 <= 300 ms"))
    index.close()
    fresh.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
