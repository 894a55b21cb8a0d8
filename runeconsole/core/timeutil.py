"""ISO-8601 UTC timestamps as the harness writes them (``2026-02-26T01:44:00Z``)."""

from __future__ import annotations

from datetime import UTC, datetime

MIN_YEAR, MAX_YEAR = 1970, 9000


def iso_z(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_exact(moment: datetime) -> str:
    """``2026-02-26T01:44:00.123456Z``: to the microsecond (a moment read back exactly)."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def compact_stamp(moment: datetime) -> str:
    """``20260226T014400Z``: the form used inside agent ids."""
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def parse_iso(value: object) -> datetime | None:
    """Parse the ISO forms other tools write; ``None`` when absent or unparseable."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == 20 and value[19] == "Z":  # the harness's own form, parsed as is (hot)
        try:
            moment = datetime.fromisoformat(value)  # already UTC
        except ValueError:
            return None
        return moment if MIN_YEAR <= moment.year <= MAX_YEAR else None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    # Far ends of the calendar are nobody's clock: arithmetic on them would overflow.
    return moment if MIN_YEAR <= moment.year <= MAX_YEAR else None


def format_age(seconds: float | None) -> str:
    """Short human age like htop/k9s show: ``42s``, ``3m05s``, ``2h10m``, ``4d3h``."""
    if seconds is None:
        return "-"
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600}h"
