"""What the test runs of one processing have shown, for the train to decide on: trees that
failed, what red runs held, entries that passed in some run, how often entries fail, and
red runs none of whose entries has failed (yet).

- A tree that tested red is red again (equal trees test alike).
- A red run held a culprit among its entries that have neither landed nor passed in
  another run since: a batch holding all of those is red without a run of its own (only
  where it is sent on to be split, or its single to run again, so no entry fails on this
  alone). Landed entries and those that passed are in ``main`` or cleared; ``main`` only
  gains commits that passed.
- A red run of several entries that all land in the end found no culprit: it flaked.
- Entries fail at ``failure_rate`` (one in ten, before this queue has shown otherwise).

Pure: no git, processes or files.
"""

from __future__ import annotations

from dataclasses import dataclass

PRIOR_FAILED, PRIOR_DONE = 1, 10  # before any is known: one entry in ten fails


@dataclass
class Suspects:
    """A red run of several entries, while none of them has failed."""

    entries: list[str]
    waiting: set[str]  # not landed yet


class Evidence:
    def __init__(self, *, failed: int = 0, done: int = 0) -> None:
        self.failed, self.done = failed, done  # entries, including the queue's history
        self.red_trees: set[str] = set()
        self.red_runs: list[frozenset[str]] = []  # what each red run held beyond main
        self.landed: set[str] = set()
        self.cleared: set[str] = set()  # passed in a run (on some main): not a culprit
        self.suspects: dict[str, Suspects] = {}  # by the red batch's id
        self.flaked: list[list[str]] = []  # red runs found flaky, for the caller to mark

    def failure_rate(self) -> float:
        return (self.failed + PRIOR_FAILED) / (self.done + PRIOR_DONE)

    def tree_failed(self, tree: str | None) -> bool:
        return tree is not None and tree in self.red_trees

    def holds_a_red_run(self, entries: set[str]) -> bool:
        """``entries`` hold every entry a red run held that may still be its culprit."""
        for red in self.red_runs:
            rest = red - self.landed - self.cleared
            if rest and rest <= entries:
                return True
        return False

    def ran_red(self, batch_id: str, own: list[str], held: set[str], tree: str | None) -> None:
        """A run of ``batch_id`` (entries ``own``; with those it was built on, ``held``)
        failed. Of several, they are suspects until one fails: if all land, it flaked."""
        if tree is not None:
            self.red_trees.add(tree)
        self.red_runs.append(frozenset(held))
        if len(own) > 1:
            self.suspects.setdefault(batch_id, Suspects(list(own), set(own)))

    def ran_green(self, held: set[str]) -> None:
        self.cleared |= held

    def landed_entries(self, entries: set[str]) -> None:
        """Entries landed; a red run whose entries have all landed flaked."""
        self.landed |= entries
        self.done += len(entries)
        for key, suspects in list(self.suspects.items()):
            suspects.waiting -= entries
            if not suspects.waiting:
                self.flaked.append(suspects.entries)
                del self.suspects[key]

    def failed_entry(self, entry_id: str) -> None:
        self.failed += 1
        self.done += 1
        self.left([entry_id])

    def left(self, entry_ids: list[str]) -> None:
        """Entries left without landing (failed, or went back to wait): a red run they
        were part of is not told flaky."""
        gone = set(entry_ids)
        for key, suspects in list(self.suspects.items()):
            if gone & set(suspects.entries):
                del self.suspects[key]
