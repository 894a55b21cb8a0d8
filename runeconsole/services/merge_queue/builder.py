"""Building a batch: each entry's branch rebased onto the one before it, in a slot's
worktree, from the batch's base (``main``, or the tip of the batch ahead). An entry whose
branch is gone, or that conflicts with ``main``, fails here, alone; one that conflicts only
with an entry ahead of it still in flight, or brings nothing of its own beyond them, goes
back to its place to wait for a later batch; the others make the chain. A batch is
verified once (its branches' commits, kept in each entry's ``original_commit``) and
rebased again whenever its base changes. An entry rebased onto a commit once is not rebased
onto it again: the halves of a split batch, built on the base the batch was, are the
batch's own commits, with no git run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue.model import (
    BRANCH_MISSING,
    CONFLICT,
    GIT_ERROR,
    Outcome,
    is_remote_only,
)
from runeconsole.services.merge_queue.outcomes import Recorder, Run
from runeconsole.services.merge_queue.slots import Slots
from runeconsole.services.merge_queue.target import Target
from runeconsole.services.merge_queue.work import Work, Write

WAITS = "waits"  # a step's result for an entry that goes back to wait for a later batch


@dataclass
class Built:
    """What building left: the chain's tip (``None``: nothing left to test), the entries
    that failed (with their outcomes), those that go back to wait, and those finished at
    once (already in ``main``)."""

    tip: str | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)


class Builder:
    def __init__(
        self,
        recorder: Recorder,
        target: Target,
        slots: Slots,
        identity: Callable[[], list[str]],
        git_timeout: float,
    ) -> None:
        self.recorder = recorder
        self.target = target
        self.slots = slots
        self.identity = identity
        self.git_timeout = git_timeout
        self.rebased: dict[tuple[str, str], str] = {}  # (onto, branch commit) -> rebased
        self.trees: dict[str, str | None] = {}

    def tree(self, commit: str) -> str | None:
        """The tree ``commit`` holds (looked up once)."""
        if commit not in self.trees:
            self.trees[commit] = gw.tree_of(self.target.root, commit)
        return self.trees[commit]

    def verify(
        self, work: Work, write: Write, now: str, fetched: dict[str, str | None] | None = None
    ) -> list[Outcome]:
        """Look up the commit of each entry's branch (once per entry; a teammate's branch
        on the remote: as just ``fetched``); an entry whose branch is gone fails
        (``branch_missing``)."""
        fetched = fetched or {}
        fresh = [run for run in work.members if "original_commit" not in run.entry]
        if not fresh:
            return []
        done = work.begin(write, now, "verify", fresh, quiet=True)
        results, extra, missing = {}, {}, []
        heads = gw.branch_heads(self.target.root) if len(fresh) > 1 else {}
        for run in fresh:
            branch = str(run.entry.get("branch") or "")
            if run.entry_id in fetched:
                found = fetched[run.entry_id]
            elif is_remote_only(run.entry):
                found = gw.resolve_commit(self.target.root, f"refs/remotes/{branch}")
            else:
                found = (
                    (heads.get(branch) if heads else None)
                    or gw.resolve_commit(self.target.root, f"refs/heads/{branch}")
                    if gw.valid_branch_name(branch)
                    else None
                )
            if found is None:
                results[run.entry_id] = "branch missing"
                missing.append(run)
                continue
            run.entry["original_commit"] = found
            results[run.entry_id], extra[run.entry_id] = "ok", {"original_commit": found}
        done(results, extra, per_entry=True)
        outcomes = []
        for run in missing:
            named = run.entry.get("branch")
            outcomes.append(
                self.recorder.fail(run, BRANCH_MISSING, f"branch {named!r} does not exist")
            )
        return outcomes

    def build(self, work: Work, base: str, main: str, write: Write, now: str) -> Built:
        """Rebase the batch's entries one on the next from ``base``, in its slot."""
        assert work.slot is not None
        built = Built()
        runs = work.members
        done = work.begin(write, now, "rebase", runs)
        tip, results, failures, finished = base, {}, [], []
        commits: dict[str, str] = {}
        at: str | None = None  # what the slot's worktree holds (None: not cleaned yet)
        for run in runs:
            original = str(run.entry["original_commit"])
            head = self.rebased.get((tip, original))
            if head is None:
                rebased = self._rebase(work.slot, tip, original, first=at is None)
                at = rebased.head or original
                if not rebased.ok:
                    word, failure = self._refused(run, rebased, tip, main, original)
                    results[run.entry_id] = word
                    if failure is None:
                        built.waiting.append(run.entry_id)
                    else:
                        failures.append(failure)
                    continue
                head = self.rebased[(tip, original)] = rebased.head or ""
            if head == tip:  # nothing of its own beyond what it is built on
                if tip == main:
                    results[run.entry_id] = "in main"
                    finished.append(run)
                else:
                    results[run.entry_id] = WAITS
                    built.waiting.append(run.entry_id)
                continue
            results[run.entry_id], commits[run.entry_id], tip = "ok", head, head
        if commits and at != tip:
            self.slots.check_out(work.slot, tip)  # its commits were made before
        extra = {"base_commit": base, "tested_commit": None}
        done(results if len(runs) > 1 else next(iter(results.values()), "ok"), extra)
        for run, reason, error, files in failures:
            built.outcomes.append(self.recorder.fail(run, reason, error, files))
        for run in finished:
            run.notes.append("nothing to merge: the branch is already in main")
            built.outcomes.append(
                self.recorder.finish(run, main, main, str(run.entry["original_commit"]))
            )
        work.commits = commits
        built.tip = tip if commits else None
        return built

    def _rebase(self, slot: int, onto: str, original: str, *, first: bool) -> gw.RebaseResult:
        """``original`` rebased onto ``onto`` in the slot's worktree (the first time, the
        worktree is cleaned of what a test run left and checked out at ``original``). The
        step is on disk before git starts: a processor killed in a long rebase is
        recovered as interrupted during it."""
        self.recorder.queue.flush()
        if first:
            self.slots.check_out(slot, original)
        return gw.rebase(
            self.slots.path(slot),
            onto,
            timeout=self.git_timeout,
            identity=self.identity(),
            start=None if first else original,
        )

    def _refused(
        self, run: Run, rebased: gw.RebaseResult, onto: str, main: str, original: str
    ) -> tuple[str, tuple[Run, str, str, list[str]] | None]:
        """Why an entry did not rebase: a conflict with ``main`` (or a broken rebase) fails
        it; a conflict only with what is ahead of it in flight sends it back to wait."""
        if not rebased.conflicts:
            return "failed", (run, GIT_ERROR, f"rebase failed: {rebased.detail}", [])
        if onto != main and self._clean_on_main(main, original):
            return WAITS, None
        files = self.target.conflict_files(main, original, rebased.conflicts)
        return "conflict", (run, CONFLICT, f"rebase onto {self.target.main_name} conflicts", files)

    def _clean_on_main(self, main: str, original: str) -> bool:
        try:
            return gw.merge_tree(self.target.root, main, original).clean
        except RuneError:
            return False
