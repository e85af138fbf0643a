"""Keys written twice in one object of a config file: JSON parsers keep the last silently, the user is told."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dcp_plugin.config.problems import Problem

# One message per file: a generated file with thousands of repeats must not flood the user.
_MAX_NAMED = 5


class DuplicateKeys:
    """An ``object_pairs_hook`` that builds each object as the parsers do (the last value wins) and notes repeats."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def __call__(self, items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        pairs = list(items)
        data = dict(pairs)
        if len(data) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.keys.append(key)
                seen.add(key)
        return data

    def problems(self, name: str) -> list[Problem]:
        """One warning naming the repeated keys, or none."""
        if not self.keys:
            return []
        unique = list(dict.fromkeys(self.keys))
        shown = ", ".join(f"`{key}`" for key in unique[:_MAX_NAMED])
        more = f" and {len(unique) - _MAX_NAMED:,} more" if len(unique) > _MAX_NAMED else ""
        verb = "appears" if len(unique) == 1 else "each appear"
        text = f"{shown}{more} {verb} more than once in one object; only the last value is used"
        return [Problem("warning", name, text, key=unique[0] if len(unique) == 1 else None)]
