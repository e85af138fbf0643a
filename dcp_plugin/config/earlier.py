"""The global dcp.jsonc earlier versions wrote with every default set: which of its values are theirs, not the user's.

Until the template listed its settings commented out, the plugin wrote every default as an
active value, under a header whose first line is ``MARKER``. Such a file would pin the
defaults of the version that wrote it forever. A file that carries the marker is compared
with the defaults every earlier version wrote (``data/earlier_defaults.json``, one entry per
distinct set the released history held, frozen: later versions write nothing active), and a
value equal to the one its version wrote counts as unset. A value the user changed differs
from it and stays in force, so an edited file keeps every edit.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from dcp_plugin.config import schema as schema_mod
from dcp_plugin.config.layering import SCHEMA_KEY
from dcp_plugin.config.schema import KeyPath

MARKER = "// dcp.jsonc: settings of dcp_plugin (Dynamic Context Pruning), created with the defaults."
_DATA = ("data", "earlier_defaults.json")
_MISSING = object()


@functools.cache
def earlier_defaults() -> tuple[dict[KeyPath, Any], ...]:
    """Each default set an earlier version wrote as active values, oldest first, as leaf path -> value."""
    text = resources.files("dcp_plugin").joinpath(*_DATA).read_text(encoding="utf-8")
    return tuple(values(entry["defaults"]) for entry in json.loads(text))


def carries_marker(text: str) -> bool:
    """Whether the file starts with the header earlier versions wrote above their active defaults."""
    return text.lstrip("\ufeff \t\r\n").startswith(MARKER)


@dataclass(frozen=True)
class Sorted:
    """A file's data split into the user's own values and those its earlier template wrote."""

    own: dict[str, Any]
    unmodified: bool  # every value and key exactly as one earlier version wrote them


def sort_values(text: str, data: Mapping[str, Any]) -> Sorted:
    """``data`` without the values its earlier template wrote; a file without the marker is all the user's own."""
    body = {key: value for key, value in data.items() if key != SCHEMA_KEY}
    if not carries_marker(text):
        return Sorted(dict(data), False)
    found = values(body)
    base = _closest(found)
    kept = {path: value for path, value in found.items() if not _same(base.get(path, _MISSING), value)}
    own = nest(kept)
    if SCHEMA_KEY in data:
        own = {SCHEMA_KEY: data[SCHEMA_KEY], **own}
    return Sorted(own, not kept and set(found) == set(base))


def values(data: Mapping[str, Any], node: Mapping[str, Any] | None = None, prefix: KeyPath = ()) -> dict[KeyPath, Any]:
    """Every setting with its key path: sections are descended into, any other value (an object too) is one."""
    node = schema_mod.schema() if node is None else node
    found: dict[KeyPath, Any] = {}
    sections = node.get("properties", {})
    for key, value in data.items():
        child = sections.get(key)
        if isinstance(child, dict) and schema_mod.is_object(child) and isinstance(value, Mapping):
            found.update(values(value, child, prefix + (key,)))
        else:
            found[prefix + (key,)] = value  # `ignoreFields: {}` is one value, not an absent one
    return found


def _closest(found: Mapping[KeyPath, Any]) -> dict[KeyPath, Any]:
    """The earlier set the file differs from least (fewest changed values, then fewest keys apart, then newest)."""

    def distance(item: tuple[int, dict[KeyPath, Any]]) -> tuple[int, int, int]:
        index, base = item
        changed = sum(1 for path, value in found.items() if not _same(base.get(path, _MISSING), value))
        return changed, len(set(base) ^ set(found)), -index

    return min(enumerate(earlier_defaults()), key=distance)[1]


def _same(a: object, b: object) -> bool:
    """JSON equality: `1` is not `true` nor `1.0`, as it would be for Python's ==."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    return type(a) is type(b) and a == b


def nest(flat: Mapping[KeyPath, Any]) -> dict[str, Any]:
    """Leaf path -> value, as the nested objects a dcp.jsonc holds."""
    nested: dict[str, Any] = {}
    for path, value in flat.items():
        node = nested
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return nested
