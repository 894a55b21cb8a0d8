"""A human gate answered from here, written the way the runner that runs the pipeline
reads it, once (the first answer wins, as for questions).

- **The engine runner** reads ``<run>/nodes/<gate>/signals/INPUT_RESPONSE.signal``
  (``response`` approve|reject; ``by`` and ``comment`` are kept in its checkpoint).
- **A live ``pipeline_runner``** takes a scored ``result: pass`` in
  ``signals/<stem>/<gate>-validation.json`` (scores, overall score and criteria results
  all present, or it sends the gate to an LLM validator). A rejection cannot be said to
  it: a scored ``fail`` on a gate loops (it cannot move an active gate back) until it
  gives up. What works: the gate stays ``active`` and waits again, and the work it
  guards goes back to ``pending`` (the harness CLI's ``node modify``), the reason
  written as the workers' guidance (``signals/<stem>/guidance/<node>.txt``, which its
  workers read); the runner dispatches the pending nodes again.
- **No runner** (the harness CLI moves the pipeline by hand): ``cli.py transition``'s
  semantics under the DOT's lock: approve is active -> validated; reject is active ->
  failed and ``route-decision fail`` (the rework targets back to active).

Every answer first claims the gate's wait (``.claude/state/gates/<stem>/<node>-<id>.json``,
created exclusively): a second answer, from another console or the CLI, is refused
with who answered first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, create_exclusive, dump_json, read_json_object
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services.pipelines.dot import parse
from runeconsole.services.pipelines.dot_edit import (
    LEGAL,
    Logs,
    edit_dot,
    set_status,
    transition_entry,
)
from runeconsole.services.pipelines.graph import (
    ACCEPTED,
    ACTIVE,
    PENDING,
    Node,
    Plan,
    between,
    rework_targets,
)
from runeconsole.services.pipelines.record import ENGINE, PIPELINE_RUNNER, Gate, Pipeline
from runeconsole.services.pipelines.store import Pipelines
from runeconsole.services.project import Project

APPROVE, REJECT = "approve", "reject"
SIGNAL, TRANSITION, REWORK, RESPONSE = "signal", "transition", "rework", "response"
DEFAULT_SCORE = 10.0


class AlreadyAnswered(RuneError):
    exit_code = 3


@dataclass
class Answered:
    gate: Gate
    answer: str  # APPROVE or REJECT
    how: str  # SIGNAL, TRANSITION, REWORK or RESPONSE
    by: str
    reason: str
    written: list[str] = field(default_factory=list)  # the files written, under the root
    reworked: list[str] = field(default_factory=list)  # nodes sent back (REWORK, REJECT)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "gate": self.gate.to_json(),
            "answer": self.answer,
            "how": self.how,
            "by": self.by,
            "reason": self.reason,
            "written": self.written,
            "reworked": self.reworked,
            "note": self.note,
        }


class GateAnswers:
    def __init__(self, project: Project, pipelines: Pipelines | None = None) -> None:
        self.project = project
        self.pipelines = pipelines or Pipelines(project)
        self.claims = project.paths.state / "gates"

    def waiting(self) -> list[Gate]:
        return [gate for pipeline in self.pipelines.list() for gate in pipeline.gates]

    def find(self, stem: str, node_id: str) -> tuple[Pipeline, Gate]:
        validate_name(node_id, "node")
        self.pipelines.forget_runners()
        pipeline = self.pipelines.get(stem)
        if pipeline.error:
            raise RuneError(
                f"{pipeline.stem}: the DOT cannot be read now ({pipeline.error}); "
                "try again in a moment"
            )
        for gate in pipeline.gates:
            if gate.node_id == node_id:
                return pipeline, gate
        node = pipeline.plan.node(node_id) if pipeline.plan else None
        if node is None:
            raise InvalidInput(f"{pipeline.stem} has no node {node_id!r}")
        if not node.is_human_gate:
            raise InvalidInput(
                f"{pipeline.stem}/{node_id} is a {node.handler or '?'} node, not a human gate"
            )
        raise AlreadyAnswered(
            f"{pipeline.stem}/{node_id} is not waiting (it is {pipeline.status_of(node)}): "
            "answered already, or not reached yet"
        )

    def answer(
        self,
        stem: str,
        node_id: str,
        answer: str,
        *,
        reason: str = "",
        by: str = "operator",
        score: float | None = None,
        via: str | None = None,
    ) -> Answered:
        if answer not in (APPROVE, REJECT):
            raise InvalidInput(f"answer {answer!r}: approve or reject")
        if answer == REJECT and not reason.strip():
            raise InvalidInput("a rejection needs a reason (--reason): the rework is guided by it")
        pipeline, gate = self.find(stem, node_id)
        how = self._how(pipeline, gate, answer, via)
        done = Answered(gate, answer, how, by, reason.strip())
        claim = self._claim(gate, done)
        try:
            if how == RESPONSE:
                self._respond(gate, done)
            elif how == SIGNAL:
                self._pass_signal(pipeline, gate, done, score)
            elif how == REWORK:
                self._rework(pipeline, gate, done)
            else:
                self._transition(pipeline, gate, done)
        except BaseException:
            claim.unlink(missing_ok=True)  # nothing was answered: the gate can be again
            raise
        self.pipelines.forget_runners()
        return done

    # -- how -------------------------------------------------------------------------------

    def _how(self, pipeline: Pipeline, gate: Gate, answer: str, via: str | None) -> str:
        if gate.runner == ENGINE:
            return RESPONSE
        runner_live = pipeline.runner == PIPELINE_RUNNER and pipeline.runner_alive is not False
        choice = via or (SIGNAL if runner_live else TRANSITION)
        if choice not in (SIGNAL, TRANSITION):
            raise InvalidInput(f"--via {choice!r}: signal or transition")
        if choice == SIGNAL:
            return SIGNAL if answer == APPROVE else REWORK
        return TRANSITION

    def _claim(self, gate: Gate, done: Answered) -> Path:
        wait = f"{gate.since.isoformat() if gate.since else ''}|{gate.run_dir}"
        path = (
            self.claims
            / gate.stem
            / f"{gate.node_id}-{hashlib.sha256(wait.encode()).hexdigest()[:12]}.json"
        )
        record = {
            "pipeline": gate.stem,
            "node_id": gate.node_id,
            "answer": done.answer,
            "how": done.how,
            "by": done.by,
            "reason": done.reason,
            "at": iso_z(self.project.clock.now()),
            "waiting_since": iso_z(gate.since) if gate.since else None,
        }
        try:
            create_exclusive(path, dump_json(record))
        except FileExistsError:
            try:
                first = read_json_object(path)
            except UnreadableFile:
                first = {}
            raise AlreadyAnswered(
                f"{gate.key} was answered already: {first.get('answer', '?')} by "
                f"{first.get('by', '?')} at {first.get('at', '?')}"
            ) from None
        return path

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.project.root))

    # -- the engine ------------------------------------------------------------------------

    def _respond(self, gate: Gate, done: Answered) -> None:
        path = Path(gate.run_dir) / "nodes" / gate.node_id / "signals" / "INPUT_RESPONSE.signal"
        payload = {"response": done.answer, "by": done.by, "comment": done.reason}
        try:
            create_exclusive(path, (json.dumps(payload) + "\n").encode("utf-8"))
        except FileExistsError:
            raise AlreadyAnswered(f"{gate.key}: {path.name} is there already") from None
        done.written.append(self._relative(path))
        done.note = "the engine reads it within its 10-second poll"

    # -- pipeline_runner -------------------------------------------------------------------

    def _pass_signal(
        self, pipeline: Pipeline, gate: Gate, done: Answered, score: float | None
    ) -> None:
        """The scored pass the runner accepts for a gate (all three score fields), linked
        into place whole: its watcher sees a new file (a rename it would not see)."""
        node = pipeline.plan.node(gate.node_id) if pipeline.plan else None
        value = DEFAULT_SCORE if score is None else float(score)
        criteria = node.criteria() if node else []
        payload = {
            "result": "pass",
            "reason": f"human reviewer: {done.reason or 'approved'}",
            "scores": {"correctness": int(value) if value.is_integer() else value},
            "overall_score": value,
            "criteria_results": [
                {
                    "criterion_id": c,
                    "status": "pass",
                    "method": "manual",
                    "evidence": "human review",
                }
                for c in criteria or ["human-review"]
            ],
            "_seq": 1,
            "_ts": datetime.now(UTC).replace(tzinfo=None).isoformat() + "Z",
            "_pid": os.getpid(),
        }
        path = self.pipelines.signal_dir(gate.stem) / f"{gate.node_id}-validation.json"
        try:
            create_exclusive(path, json.dumps(payload, indent=2).encode("utf-8"))
        except FileExistsError:
            raise AlreadyAnswered(f"{gate.key}: {path.name} waits to be read already") from None
        done.written.append(self._relative(path))
        done.note = "the runner takes it on its next pass (at most 30 s)"

    def _rework(self, pipeline: Pipeline, gate: Gate, done: Answered) -> None:
        dot = Path(pipeline.path)
        file, ops = self._relative(dot), dot.with_name(dot.name + ".ops.jsonl")

        def change(text: str) -> tuple[str, Logs]:
            plan = Plan.of(parse(text))
            if (node := plan.node(gate.node_id)) is None or node.status != ACTIVE:
                raise AlreadyAnswered(f"{gate.key} is no longer waiting")
            back = [
                n
                for t in rework_targets(plan, gate.node_id)
                for n in between(plan, t, gate.node_id)
                if (found := plan.node(n)) and found.status != PENDING
            ]
            if not back:
                raise RuntimeError("nothing to send back")
            done.reworked = list(dict.fromkeys(back))
            return self._send_back(text, done.reworked, file, ops)

        try:
            edit_dot(dot, change)
        except RuntimeError:
            raise RuneError(
                f"{gate.key}: no work before the gate to send back; approve it, or stop the runner "
                "and reject with --via transition"
            ) from None
        done.written += [file, self._relative(ops)]
        self._guide(gate, done)
        done.note = (
            "a scored fail would loop (the runner cannot move a gate back): the gate stays waiting "
            f"and {', '.join(done.reworked)} went back to pending with your reason as guidance"
        )

    def _send_back(self, text: str, nodes: list[str], file: str, ops: Path) -> tuple[str, Logs]:
        """``nodes`` back to pending as the harness CLI's ``node modify`` does (its log line)."""
        logs: Logs = []
        for node_id in nodes:
            text = set_status(text, node_id, PENDING)
            entry = {
                "timestamp": self.project.clock.now().astimezone(UTC).isoformat(),
                "file": file,
                "command": "node modify",
                "node_id": node_id,
                "updates": {"status": PENDING, "fillcolor": "lightyellow"},
            }
            logs.append((ops, entry))
        return text, logs

    def _guide(self, gate: Gate, done: Answered) -> None:
        """The reason, as the guidance the harness's workers read for each node sent back."""
        guidance = self.pipelines.signal_dir(gate.stem) / "guidance"
        for node_id in done.reworked:
            path = guidance / f"{node_id}.txt"
            text = f"The human gate {gate.node_id} rejected this work.\n\n{done.reason}\n"
            atomic_write_bytes(path, text.encode("utf-8"))
            done.written.append(self._relative(path))

    # -- no runner: the CLI's transitions --------------------------------------------------

    def _transition(self, pipeline: Pipeline, gate: Gate, done: Answered) -> None:
        dot = Path(pipeline.path)
        file = self._relative(dot)
        log = dot.with_name(dot.name + ".transitions.jsonl")
        ops = dot.with_name(dot.name + ".ops.jsonl")
        now = self.project.clock.now

        def move(text: str, plan: Plan, node: Node | None, new: str, logs: Logs) -> str:
            old = node.status if node else "?"
            if node is None or new not in LEGAL.get(old, set()):
                raise AlreadyAnswered(f"{gate.key}: {old} -> {new} is not a legal move")
            logs.append(
                (log, transition_entry(file, node.node_id, old, new, now().astimezone(UTC)))
            )
            return set_status(text, node.node_id, new)

        def change(text: str) -> tuple[str, Logs]:
            plan = Plan.of(parse(text))
            node = plan.node(gate.node_id)
            if node is None or node.status != ACTIVE:
                raise AlreadyAnswered(f"{gate.key} is no longer waiting")
            logs: Logs = []
            if done.answer == APPROVE:
                return move(text, plan, node, "validated", logs), logs
            text = move(text, plan, node, "failed", logs)
            affected, finished = [], []
            for target in rework_targets(plan, gate.node_id):
                found = plan.node(target)
                if found is None or found.status == ACTIVE:
                    continue
                if found.status in ("validated", ACCEPTED):
                    finished.append(target)  # route-decision would skip it: sent back
                    continue
                if found.status == "impl_complete":
                    text = set_status(text, target, "failed")
                text = set_status(text, target, ACTIVE)
                affected.append(target)
            entry = {
                "timestamp": now().astimezone(UTC).isoformat(),
                "file": file,
                "command": "route-decision",
                "node_id": gate.node_id,
                "result": "fail",
                "affected": affected,
            }
            logs.append((log, entry))
            if finished:
                text, more = self._send_back(text, finished, file, ops)
                logs += more
            done.reworked = affected + finished
            return text, logs

        edit_dot(dot, change)
        done.written += [file, self._relative(log)]
        # The CLI leaves the runner's marker behind, and gate_watch reports the gate for
        # ever after; decided here, the marker goes (as the runner removes it for a signal).
        marker = self.pipelines.signal_dir(gate.stem) / f"{gate.node_id}.gate-wait"
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()
            done.written.append(f"{self._relative(marker)} (removed)")
        if done.answer == REJECT:
            self._guide(gate, done)
        done.note = "moved as the harness CLI's transition does, under the DOT's lock"
        if done.answer == REJECT and not done.reworked:
            done.note += "; no work before the gate could be sent back"
