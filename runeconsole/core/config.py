"""Typed, validated access to ``.claude/talisman.yml`` (over the user's own talisman:
``talisman_files``).

Services declare their own settings (key, default, allowed range) through
``Section``; this module only knows how to say exactly which file and key is wrong.
In lenient mode (the console) a bad value is recorded in ``problems`` and the default
is used, so a typo never takes the console down.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError
from runeconsole.core.talisman_files import TALISMAN, Key, origin, read_layers

__all__ = ["TALISMAN", "Section", "Talisman", "tell_warnings_to"]

_warning_sink: Callable[[str], None] | None = None


def tell_warnings_to(sink: Callable[[str], None]) -> None:
    """Also pass every talisman warning to ``sink`` as it is found (the CLI prints them on
    stderr; the console shows each talisman's ``warnings`` itself)."""
    global _warning_sink
    _warning_sink = sink


@dataclass
class Talisman:
    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    strict: bool = True
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Things worth saying that never stop anything (an unknown key: a typo?)."""

    origins: dict[Key, Path] = field(default_factory=dict)
    """Which file set each key: the user's talisman lies under the project's."""

    @classmethod
    def load(cls, root: Path, *, strict: bool = True) -> Talisman:
        """The project's ``.claude/talisman.yml`` over the user's (``talisman_files``)."""
        talisman = cls(path=root / TALISMAN, strict=strict)
        layers = read_layers(root)
        for problem in layers.problems:
            talisman.report(problem)
        talisman.data, talisman.origins = layers.data, layers.origins
        return talisman

    def where(self, *names: str) -> Path:
        """The file that set the key ``names`` (the project's when no file did)."""
        return origin(self.origins, names, self.path)

    def report(self, problem: str) -> None:
        if self.strict:
            raise RuneError(problem)
        if problem not in self.problems:  # several loaders may read one talisman
            self.problems.append(problem)

    def warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)
            if _warning_sink is not None:
                _warning_sink(warning)

    def section(self, *names: str) -> Section:
        node: Any = self.data
        for depth, name in enumerate(names):
            node = node.get(name) if isinstance(node, dict) else None
            if node is None:
                return Section(self, ".".join(names), {})
            if not isinstance(node, dict):
                where = self.where(*names[: depth + 1])
                self.report(f"{where}: {'.'.join(names[: depth + 1])} must be a mapping")
                return Section(self, ".".join(names), {})
        return Section(self, ".".join(names), node)


@dataclass
class Section:
    talisman: Talisman
    name: str
    data: dict[str, Any]
    read: set[str] = field(default_factory=set)

    def get(self, key: str, default: Any) -> Any:
        self.read.add(key)
        return self.data.get(key, default)

    def where(self, key: str) -> Path:
        """The file that set ``key`` of this section."""
        return self.talisman.where(*self.name.split("."), key)

    def warn_unread(self, *also_known: str) -> None:
        """Once a loader has read its settings: warn about keys it did not read, since
        ``timout_seconds`` would otherwise be ignored without a word. ``also_known``:
        keys read elsewhere, or documented by the tool that owns the section."""
        known = sorted(self.read | set(also_known))
        for key in self.data:
            warning = (
                f"{self.where(key)}: {self.name}.{key} is not a setting "
                f"(known: {', '.join(known)}); ignored"
            )
            if key not in known:
                self.talisman.warn(warning)

    def _bad(self, key: str, value: Any, allowed: str) -> None:
        where = self.where(key)
        self.talisman.report(f"{where}: {self.name}.{key} is {value!r}; allowed: {allowed}")

    def number(
        self, key: str, default: float, minimum: float | None = None, maximum: float | None = None
    ) -> float:
        value = self.get(key, default)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and _finite(value)
        ok = ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
        if not ok:
            bounds = [f">= {minimum:g}" if minimum is not None else "", ""]
            bounds[1] = f"<= {maximum:g}" if maximum is not None else ""
            self._bad(key, value, " and ".join(b for b in ["a number", *bounds] if b))
            return default
        return float(value)

    def integer(
        self, key: str, default: int, minimum: int | None = None, maximum: int | None = None
    ) -> int:
        value = self.get(key, default)
        ok = isinstance(value, int) and not isinstance(value, bool)
        ok = ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
        if not ok or not isinstance(value, int):
            bounds = [f">= {minimum}" if minimum is not None else ""]
            bounds.append(f"<= {maximum}" if maximum is not None else "")
            self._bad(key, value, " and ".join(b for b in ["a whole number", *bounds] if b))
            return default
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.get(key, default)
        if not isinstance(value, bool):
            self._bad(key, value, "true or false")
            return default
        return value

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.get(key, default)
        if not isinstance(value, str) or value not in choices:
            self._bad(key, value, " | ".join(choices))
            return default
        return value

    def text(self, key: str, default: str | None) -> str | None:
        value = self.get(key, default)
        if value is not None and not isinstance(value, str):
            self._bad(key, value, "a string")
            return default
        return value


def _finite(value: float) -> bool:
    """inf, nan and integers too large for a float are not settings anyone meant."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
