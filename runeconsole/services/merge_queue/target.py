"""The branch the queue lands on, its target: ``main``, or with a ``remote`` the
remote's (moved by a push, ``remote.Remote``); ``lander`` lands a green batch on it.
``main`` moves only by compare-and-swap, the worktree that has ``main`` checked out
follows it (or ``main`` is put back), and the merged branch is deleted or pointed at what
was tested, unless something moved it meanwhile. With a remote the local ``main``
follows the remote's, and a branch on the remote is deleted once landed when it is ours
to delete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runeconsole.adapters import git_worktrees as gw
from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue.model import remote_branch_of
from runeconsole.services.merge_queue.queue_file import QueueFile
from runeconsole.services.merge_queue.remote import Remote


class Target:
    def __init__(self, queue: QueueFile) -> None:
        self.root = queue.root
        self.settings = queue.settings
        self.main_ref = queue.main_ref
        self.main_name = queue.settings.target
        self.remote = Remote(queue) if queue.settings.remote else None

    def main_is(self, commit: str) -> bool:
        return gw.resolve_commit(self.root, self.main_ref) == commit

    def checkout_refuses(self, holder: Path | None, base: str, tested: str) -> str | None:
        """Why the checkout of main could not follow a move from base to tested, if it could not.

        Asked before main moves (``read-tree -n``): a checkout that cannot be
        fast-forwarded would be left behind its own branch. Tracked edits and untracked
        files in the paths the merge writes both count.
        """
        if holder is None:
            return None
        complaint = gw.fast_forward_checkout(holder, base, tested, dry_run=True)
        if complaint is None:
            return None
        files = gw.local_changes(holder, gw.changed_between(self.root, base, tested))
        return self.overwrite_refusal(holder, ", ".join(files) if files else complaint)

    def overwrite_refusal(self, holder: Path, what: str) -> str:
        return (
            f"the checkout of {self.settings.main_branch} in {holder} has local files this "
            f"merge would overwrite: {what}; commit, move or remove them, then retry"
        )

    def blocked(
        self, holder: Path | None, parents: dict[str, str], commits: dict[str, str]
    ) -> dict[str, list[str]]:
        """Of a batch's entries (``commits``: each one's commit, ``parents``: the commit
        before it), those whose own changes hit local files in the checkout of main, with
        those files: the ones a refused fast-forward is about."""
        if holder is None:
            return {}
        found = {}
        for entry_id, commit in commits.items():
            changed = gw.changed_between(self.root, parents[entry_id], commit)
            files = gw.local_changes(holder, changed)
            if files:
                found[entry_id] = files
        return found

    def follow_in_checkout(
        self, holder: Path | None, base: str, tested: str, notes: list[str]
    ) -> str | None:
        """Fast-forward the checkout of main just moved; if it refuses, move main back.

        The dry run passed a moment ago, so a refusal means someone changed the checkout
        since: putting main back (compare-and-swap, to a commit that was main) leaves
        branch and checkout agreeing, rather than a checkout behind its own branch.
        """
        if holder is None or tested == base:
            return None
        pause_point("merge-queue-main-moved")
        complaint = gw.fast_forward_checkout(holder, base, tested)
        if complaint is None:
            return None
        if not gw.compare_and_swap(self.root, self.main_ref, base, tested):
            notes.append(f"{holder} not fast-forwarded: {complaint}")  # main moved on: it stands
            return None
        return f"the checkout of {self.settings.main_branch} in {holder} changed: {complaint}"

    def conflict_files(self, base: str, original: str, first_stop: list[str]) -> list[str]:
        """Every file the branch conflicts on, not only those of the commit the rebase stopped at.

        ``merge-tree`` merges the whole branch with main in the object store; a file only
        one commit conflicts on (a later commit undoes it) still comes from the rebase.
        """
        try:
            whole = gw.merge_tree(self.root, base, original).conflicts
        except RuneError:  # e.g. unrelated histories: the rebase's list is all there is
            whole = []
        return sorted(set(first_stop) | set(whole))

    def sync_main_checkout(self, base: str, tested: str) -> list[str]:
        """Fast-forward the worktree that has main checked out (if any) from base to tested
        (with a remote: the local main follows the remote's, now at tested)."""
        if self.remote is not None:
            return self.remote.follow(tested)
        holder = gw.checked_out_at(self.root, self.settings.main_branch)
        if holder is None or tested == base:
            return []
        if gw.resolve_commit(self.root, self.main_ref) != tested:
            return [f"{holder} left as it is: main has moved on since"]
        complaint = gw.fast_forward_checkout(holder, base, tested)
        return [f"{holder} not fast-forwarded: {complaint}"] if complaint else []

    def settle_branches(self, landed: list[tuple[str, str, str]]) -> dict[str, list[str]]:
        """Each merged branch (``(branch, tested, original)``) deleted, or pointed at what
        was tested, unless it is in use or moved: every head and checkout read once and
        the refs changed in one ``update-ref --stdin`` (each by compare-and-swap); if git
        refuses that (one changed meanwhile), one at a time. Notes by branch."""
        heads, held = gw.branch_heads(self.root), gw.checked_out_branches(self.root)
        notes: dict[str, list[str]] = {}
        changes: dict[str, tuple[str, str]] = {}  # ref: (its new commit or "", its current)
        for branch, tested, original in landed:
            current = heads.get(branch)
            if current is None:
                continue
            if current not in (original, tested):
                notes[branch] = [f"{branch} moved while queued; left as it is"]
            elif branch in held:
                notes[branch] = [f"{branch} is checked out in {held[branch]}; left as it is"]
            else:
                new = tested if self.settings.keep_branch else ""
                changes[f"refs/heads/{branch}"] = (new, current)
        if changes and not gw.update_refs(self.root, changes):
            for ref, (new, current) in changes.items():
                if not gw.update_refs(self.root, {ref: (new, current)}):
                    branch = ref.removeprefix("refs/heads/")
                    notes[branch] = [f"{branch} changed meanwhile; left as it is"]
        return notes

    def settle_remote(self, entry: dict[str, Any], original: str) -> list[str]:
        """A landed entry's branch on the remote deleted, with a lease on the commit that
        was taken (``original``), when we pushed it or ``delete_remote_branch`` says so."""
        branch = remote_branch_of(entry)
        if self.remote is None or branch is None or entry.get("remote") != self.remote.name:
            return []
        if entry.get("pushed_by_us") is not True and not self.settings.delete_remote_branch:
            return []
        return [self.remote.delete_branch(branch, original)]
