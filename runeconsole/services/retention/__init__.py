"""Retention: every kind of record that would grow without bound has a policy (days, and
for most a count too), and old records are compacted into a monthly archive the CLI still
reads (``permissions history --all``, ``question list --all``). Nothing still waiting (a
question without an answer, a request without a decision, a queue entry not finished) is
ever moved.

One job a module: ``settings`` (the policy table, ``runeconsole.retention`` in the
talisman), ``archive`` (the monthly files and the journal of a move), ``report`` (what a
prune did; which records leave), one module per kind (``permissions``, ``questions``,
``merge_queue``, ``files_by_age`` for reviews, signals and agents' history, ``logs`` for
the hook's log and the notification times, ``conversations`` for the search index's rows
of transcripts gone), and ``service.Retention``, which runs them.
"""

from runeconsole.services.retention.report import KindReport, PruneReport
from runeconsole.services.retention.service import PruneRunning, Retention
from runeconsole.services.retention.settings import POLICIES, Policy, RetentionSettings

__all__ = [
    "POLICIES",
    "KindReport",
    "Policy",
    "PruneReport",
    "PruneRunning",
    "Retention",
    "RetentionSettings",
]
