"""A config layer's last good version: what stays in force while its file is broken, protections above all.

A file being edited is often broken for a moment (a missing comma, a half-written save). Skipping
it whole would drop its protected file patterns on the next request, and a read of a protected
file could be pruned. So a layer that cannot be used keeps its last good version, and a
protection (``protectedFilePatterns``, a ``protectedTools`` list) whose new value is rejected
keeps its last good entries next to the new valid ones; other keys follow the usual rule (a bad
key falls back to the layer below). A file that is deleted is gone: that is an edit, not a break.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from dcp_plugin.config.loader import LayerResult
from dcp_plugin.config.problems import UNUSABLE, Problem
from dcp_plugin.config.schema import KeyPath, dotted

PROTECTIONS = ("protectedFilePatterns", "protectedTools")


def keep_last_good(good: LayerResult | None, new: LayerResult) -> LayerResult:
    """What a layer contributes now: ``new``, or its last ``good`` version where ``new`` is broken."""
    if good is None or good.data is None:
        return new
    if new.data is None:
        problems = list(new.problems)
        if not any(UNUSABLE in p.text for p in problems):
            problems.append(Problem("warning", str(new.path), f"cannot be used; {UNUSABLE}"))
        return LayerResult(new.path, copy.deepcopy(good.data), problems)
    data = new.data
    for path, entries in protections(good.data):
        if not _rejected(path, new.problems):
            continue  # changed or removed on purpose: the new version holds
        now = _get(data, path)
        kept = [*entries, *(entry for entry in (now if isinstance(now, list) else []) if entry not in entries)]
        _set(data, path, kept)
    return new


def protections(data: Mapping[str, Any], prefix: KeyPath = ()) -> Iterator[tuple[KeyPath, list[Any]]]:
    """Every protection list of a layer's valid data, with its key path."""
    for key, value in data.items():
        path = (*prefix, key)
        if key in PROTECTIONS and isinstance(value, list):
            yield path, list(value)
        elif isinstance(value, Mapping):
            yield from protections(value, path)


def _rejected(path: KeyPath, problems: list[Problem]) -> bool:
    """Whether an error of the new version removed this key, one of its entries, or the layer's whole data."""
    name = dotted(path)
    for problem in problems:
        if problem.level != "error":
            continue
        key = problem.key
        if key is None or key == name or key.startswith((f"{name}[", f"{name}.")) or name.startswith(f"{key}."):
            return True
    return False


def _get(data: Mapping[str, Any], path: KeyPath) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _set(data: dict[str, Any], path: KeyPath, value: Any) -> None:
    node = data
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value
