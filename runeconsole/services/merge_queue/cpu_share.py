"""How many test slots the queue runs (``parallel_runs``): a number, or ``auto``, chosen
from the test command's measured CPU share. A test run that sleeps or waits most of its
time (a database, a browser, the network) uses little of a core, so more of them fit
beside one another than there are cores; one that computes all along fits one a core.

The share is the CPU time of the processor's children (``RUSAGE_CHILDREN``: every test
run, with what it waited for, and the queue's own git processes) over the wall time of
the test runs that ended meanwhile, kept per test command in the queue's file
(``cpu_share``: the last ``KEPT`` runs as ``[cpu seconds, wall seconds]``). The slots are
then ``floor(cores / share)``, at least 1 and at most ``MOST``; until a run of the
command has been measured, ``START`` (the fixed default of old)."""

from __future__ import annotations

import math
import os
import resource
from typing import Any

from runeconsole.services.merge_queue.settings import MergeQueueSettings
from runeconsole.services.merge_queue.timeouts import command_key

CPU_SHARE = "cpu_share"  # top-level field: {command line: [[cpu seconds, wall seconds], ...]}
KEPT = 20  # runs of a command kept
MOST = 8  # slots auto chooses at most
FLOOR = 0.01  # a share under this counts as this (a run is never free)

Samples = list[list[float]]


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def samples(data: dict[str, Any], command: list[str]) -> Samples:
    """The measured runs of ``command`` in the queue's ``data``, oldest first."""
    kept = data.get(CPU_SHARE)
    return _valid(kept.get(command_key(command)) if isinstance(kept, dict) else None)


def _valid(found: Any) -> Samples:
    """The well-formed ``[cpu, wall]`` pairs of what the file holds."""
    if not isinstance(found, list):
        return []
    return [
        [float(pair[0]), float(pair[1])]
        for pair in found
        if isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 for x in pair)
    ]


def share_of(runs: Samples) -> float | None:
    """CPU seconds per second of a test run, over ``runs`` (``None``: none measured)."""
    wall = sum(w for _, w in runs)
    return sum(c for c, _ in runs) / wall if wall > 0 else None


def slots_for(share: float, cpus: int) -> int:
    """As many runs as the cores hold at that share each: 1 to ``MOST``."""
    return max(1, min(MOST, math.floor(cpus / max(share, FLOOR))))


def slots_now(settings: MergeQueueSettings, data: dict[str, Any], command: list[str]) -> int:
    """The slots a processor runs ``command`` in: the number set, or (``auto``) those its
    measured share leaves room for; ``parallel_runs`` until one run is measured."""
    if not settings.parallel_runs_auto:
        return settings.parallel_runs
    share = share_of(samples(data, command))
    return settings.parallel_runs if share is None else slots_for(share, cores())


class ShareMeter:
    """The processor's measure: each test run's end adds the CPU its children used since
    the last one, over that run's wall time; the samples go to the queue's file with its
    next write (``pending``)."""

    def __init__(self, data: dict[str, Any]) -> None:
        kept = data.get(CPU_SHARE)
        self.kept: dict[str, Samples] = (
            {str(key): _valid(runs) for key, runs in kept.items()} if isinstance(kept, dict) else {}
        )
        self.last = _children_cpu()

    def ended(self, command: list[str], seconds: float) -> float | None:
        """A run of ``command`` that took ``seconds`` ended (and was reaped); returns the
        command's share now."""
        now = _children_cpu()
        used, self.last = max(0.0, now - self.last), now
        key = command_key(command)
        runs = self.kept.setdefault(key, [])
        runs.append([round(used, 4), round(max(0.0, seconds), 4)])
        del runs[:-KEPT]
        return share_of(runs)

    def pending(self) -> dict[str, Any]:
        """The top-level field to write."""
        return {CPU_SHARE: {key: [list(pair) for pair in runs] for key, runs in self.kept.items()}}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class SlotCount:
    """The slots of one processing run: ``slots_now`` at its start and, with ``auto``,
    again after each run measured."""

    def __init__(self, settings: MergeQueueSettings, data: dict[str, Any]) -> None:
        self.auto = settings.parallel_runs_auto
        self.meter = ShareMeter(data)
        self.count = slots_now(settings, data, settings.test_command or [])

    def ended(self, command: list[str], seconds: float) -> int | None:
        """A run ended: the new count if it changes (``auto``), else ``None``."""
        share = self.meter.ended(command, seconds)
        if not self.auto or share is None or slots_for(share, cores()) == self.count:
            return None
        self.count = slots_for(share, cores())
        return self.count
