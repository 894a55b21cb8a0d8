"""``runeconsole conversation AGENT``: the agent's transcript found from what its hooks
recorded (else from its working directory), one line a turn with the subagent's turns
indented, ``--json``, ``--since``, ``--session``; the operator's prompts marked."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.conversations.locate import (
    OperatorPrompts,
    project_dir_name,
    projects_dir,
    record_sent,
    sessions_of,
    transcript_for,
)
from runeconsole.services.project import Project
from tests.support.cli import CliResult
from tests.support.paths import FIXTURES

Cli = Callable[..., CliResult]
SESSION = "8e69a3ba-2b65-4373-a7bd-7b43123216b2"
OTHER = "0b0b0b0b-1111-2222-3333-444444444444"
FIXTURE = FIXTURES / "claude_transcripts" / "-tmp-tx-project"


def identity(root: Path, key: str, **fields: object) -> None:
    role, name = key.split("-", 1)
    folder = root / ".claude" / "state" / "identities"
    folder.mkdir(parents=True, exist_ok=True)
    record = {"agent_id": f"{key}-20261129T050000Z", "role": role, "name": name, "status": "active"}
    (folder / f"{key}.json").write_text(json.dumps({**record, **fields}))


def turns_of(result: CliResult) -> list[dict[str, Any]]:
    assert result.code == 0, result.err
    found = result.json()
    assert isinstance(found, list)
    return found


def sessions_dir(cwd: Path) -> Path:
    """The fixture's session (and its subagent) as Claude Code keeps it for ``cwd``."""
    folder = projects_dir() / project_dir_name(cwd)
    shutil.copytree(FIXTURE, folder, dirs_exist_ok=True)
    return folder


def test_the_conversation_prints_a_line_a_turn_the_subagent_indented(
    project: Path, cli: Cli
) -> None:
    folder = sessions_dir(project)
    identity(project, "worker-a", claude={"transcript_path": str(folder / f"{SESSION}.jsonl")})
    result = cli("conversation", "worker-a", "--root", str(project))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == f"── worker-a: session {SESSION} ({folder / f'{SESSION}.jsonl'})"
    body = [line[21:] for line in lines[1:]]
    assert body == [
        "user      prompt      Please do the migration",
        "assistant tool        Bash: echo hello-from-bash  → hello-from-bash",
        "assistant tool        Write: /tmp/tx/project/notes.md  → File created successfully at: "
        "/tmp/tx/project/notes.md (file state is current i…",
        "assistant tool        Task: look around  → Async agent launched successfully. (This tool "
        "result is internal metadata — nev…",
        "    assistant prompt      List the files  [subagent prompt]",
        "    assistant text        Done. **All** good.",
        "assistant text        Sub: I looked.",
        'system    prompt      Agent "look around" finished  [task-notification]',
        "assistant text        Nothing more to do.",
    ]
    assert lines[1].startswith("2026-11-29 05:25:49  ")


def test_json_gives_every_turn_whole(project: Path, cli: Cli) -> None:
    sessions_dir(project)
    identity(project, "worker-a")  # no hook recorded: the newest of its directory's
    result = cli("conversation", "worker-a", "--json", "--root", str(project))
    assert result.code == 0, result.err
    turns = result.json()
    assert isinstance(turns, list) and len(turns) == 9
    bash = turns[1]
    assert (bash["tool"], bash["subject"], bash["result"]) == (
        "Bash",
        "echo hello-from-bash",
        "hello-from-bash",
    )
    assert bash["at"] == "2026-11-29T05:25:49.402000+00:00"
    assert [t["depth"] for t in turns] == [0, 0, 0, 0, 1, 1, 0, 0, 0]


def test_since_keeps_only_the_later_turns(project: Path, cli: Cli) -> None:
    sessions_dir(project)
    identity(project, "worker-a")
    result = cli(
        "conversation",
        "worker-a",
        "--json",
        "--since",
        "2026-11-29T05:25:49.650Z",
        "--root",
        str(project),
    )
    assert [t["text"] for t in turns_of(result)] == [
        "Done. **All** good.",  # the subagent's last word, under its call
        "Sub: I looked.",
        'Agent "look around" finished\nDone. **All** good.',
        "Nothing more to do.",
    ]
    assert cli("conversation", "worker-a", "--since", "1d", "--root", str(project)).code == 0
    bad = cli("conversation", "worker-a", "--since", "soon", "--root", str(project))
    assert bad.code != 0 and "--since 'soon'" in bad.err


def test_session_picks_another_of_the_agents_sessions(project: Path, cli: Cli) -> None:
    folder = sessions_dir(project)
    (folder / f"{OTHER}.jsonl").write_text(
        json.dumps(
            {
                "type": "user",
                "message": {"role": "user", "content": "an older one"},
                "sessionId": OTHER,
            }
        )
        + "\n"
    )
    identity(project, "worker-a", claude={"transcript_path": str(folder / f"{SESSION}.jsonl")})
    result = cli("conversation", "worker-a", "--session", OTHER, "--json", "--root", str(project))
    assert [t["text"] for t in turns_of(result)] == ["an older one"]
    bad = cli("conversation", "worker-a", "--session", "../../etc/passwd", "--root", str(project))
    assert bad.code != 0 and "not a UUID" in bad.err


def test_an_unknown_agent_or_one_without_a_conversation_says_why(project: Path, cli: Cli) -> None:
    result = cli("conversation", "worker-x", "--root", str(project))
    assert result.code != 0 and "no agent worker-x" in result.err
    identity(project, "worker-b")
    result = cli("conversation", "worker-b", "--root", str(project))
    assert result.code != 0 and "no conversation found" in result.err
    result = cli("conversation", "../evil", "--root", str(project))
    assert result.code != 0 and "not allowed" in result.err


def test_the_operators_say_and_review_are_marked_as_theirs(project: Path, cli: Cli) -> None:
    folder = sessions_dir(project)
    identity(project, "worker-a")
    prompts = ["Please do the migration", "Rename x to y\n\n(line 3)", "fix it yourself"]
    with open(folder / f"{SESSION}.jsonl", "a") as stream:
        for text in prompts[1:]:
            record = {
                "type": "user",
                "message": {"role": "user", "content": text},
                "sessionId": SESSION,
            }
            stream.write(json.dumps(record) + "\n")
    root = Project(project)
    record_sent(root, "worker-a", "Please do the migration")
    reviews = project / ".claude" / "state" / "reviews" / "worker-a"
    reviews.mkdir(parents=True)
    (reviews / "1-x.json").write_text(
        json.dumps({"verdict": "changes_requested", "prompt": "Rename x to y\n(line 3)"})
    )
    turns = turns_of(cli("conversation", "worker-a", "--json", "--root", str(project)))
    said = [(t["speaker"], t["note"]) for t in turns if t["kind"] == "prompt" and t["depth"] == 0]
    assert said[:1] + said[-2:] == [("operator", "say"), ("operator", "review"), ("user", "")]
    assert len(OperatorPrompts.of(root, "worker-a")) == 2


def test_sessions_of_lists_the_roots_worktrees_and_agents_transcripts(project: Path) -> None:
    root_dir = sessions_dir(project)
    tree = project / ".claude" / "worktrees" / "w1"
    tree.mkdir(parents=True)
    tree_dir = projects_dir() / project_dir_name(tree)
    tree_dir.mkdir()
    (tree_dir / f"{OTHER}.jsonl").write_text("")
    (tree_dir / "notes.jsonl").write_text("")  # not a session's
    elsewhere = projects_dir() / "-somewhere-else"
    elsewhere.mkdir()
    third = "0c0c0c0c-1111-2222-3333-444444444444"
    (elsewhere / f"{third}.jsonl").write_text("")
    identity(project, "worker-a", claude={"transcript_path": str(elsewhere / f"{third}.jsonl")})
    found = sessions_of(Project(project))
    assert found == sorted(
        [root_dir / f"{SESSION}.jsonl", tree_dir / f"{OTHER}.jsonl", elsewhere / f"{third}.jsonl"]
    )


def test_a_long_working_directory_is_found_by_its_cut_name(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120) / ("e" * 120)
    deep.mkdir(parents=True)
    identity(tmp_path, "worker-a", claude={"cwd": str(deep)})
    name = project_dir_name(deep)[:200] + "-1abc2de"
    (projects_dir() / name).mkdir(parents=True)
    (projects_dir() / name / f"{SESSION}.jsonl").write_text("")
    assert (
        transcript_for(Project(tmp_path), "worker-a") == projects_dir() / name / f"{SESSION}.jsonl"
    )


def test_an_ended_agent_is_found_by_its_kept_identity(project: Path) -> None:
    folder = sessions_dir(project)
    history = project / ".claude" / "state" / "identities" / "history"
    history.mkdir(parents=True)
    (history / "worker-z-20261129T050000Z.json").write_text(
        json.dumps(
            {
                "role": "worker",
                "name": "z",
                "claude": {"transcript_path": str(folder / f"{SESSION}.jsonl")},
            }
        )
    )
    assert transcript_for(Project(project), "worker-z") == folder / f"{SESSION}.jsonl"


def test_record_sent_refuses_a_kind_it_does_not_know_and_a_bad_key(project: Path) -> None:
    with pytest.raises(InvalidInput):
        record_sent(Project(project), "worker-a", "x", "shout")
    with pytest.raises(InvalidInput):
        record_sent(Project(project), "../a", "x")
    with pytest.raises(RuneError):
        transcript_for(Project(project), "worker-a", "not-a-uuid")
    assert not os.path.exists(
        project / ".claude" / "state" / "conversations" / "sent" / "worker-a.jsonl"
    )


def test_a_review_sent_through_say_is_marked_a_review(project: Path) -> None:
    root = Project(project)
    prompt = "Review of your changes:\n- a.py:3: rename x"
    record_sent(root, "worker-a", prompt)  # what say keeps when the review sends it
    record_sent(root, "worker-a", "thanks")
    reviews = project / ".claude" / "state" / "reviews" / "worker-a"
    reviews.mkdir(parents=True)
    (reviews / "1-x.json").write_text(json.dumps({"prompt": prompt}))
    (reviews / "2-x.json").write_text("{not json")
    found = OperatorPrompts.of(root, "worker-a")
    assert (found.which(prompt), found.which(" thanks "), found.which("other")) == (
        "review",
        "say",
        None,
    )
