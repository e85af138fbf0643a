"""Load the installed JSON schema of dcp.jsonc and derive defaults and key paths from it."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

SCHEMA_PACKAGE = "dcp_plugin"
SCHEMA_PARTS = ("schema", "dcp.schema.json")

KeyPath = tuple[str, ...]


def schema_resource() -> Any:
    """The schema as an importlib.resources Traversable inside the installed package."""
    return resources.files(SCHEMA_PACKAGE).joinpath(*SCHEMA_PARTS)


def schema_path() -> Path | None:
    """Filesystem path of the installed schema, or None if the package is not on disk (zip)."""
    resource = schema_resource()
    return resource if isinstance(resource, Path) else None


def schema_uri() -> str | None:
    """file:// URI of the installed schema, for the `$schema` line editors follow."""
    path = schema_path()
    return path.resolve().as_uri() if path is not None else None


@functools.cache
def _schema_text() -> str:
    text: str = schema_resource().read_text(encoding="utf-8")
    return text


def load_schema() -> dict[str, Any]:
    """A fresh copy of the schema (callers may mutate it)."""
    data: dict[str, Any] = json.loads(_schema_text())
    return data


@functools.cache
def _cached_schema() -> dict[str, Any]:
    return load_schema()


def schema() -> dict[str, Any]:
    """The shared parsed schema; treat as read-only."""
    return _cached_schema()


def is_object(node: dict[str, Any]) -> bool:
    """Whether a schema node describes a JSON object with named keys."""
    return node.get("type") == "object" and "properties" in node


def subschema(path: KeyPath) -> dict[str, Any] | None:
    """The schema node of a dotted key path, or None when the path is not a known key."""
    node = schema()
    for key in path:
        if not is_object(node) or key not in node["properties"]:
            return None
        node = node["properties"][key]
    return node


def iter_keys(node: dict[str, Any] | None = None, prefix: KeyPath = ()) -> Iterator[tuple[KeyPath, dict[str, Any]]]:
    """Every key path the schema knows (objects and leaves), depth first, `$schema` excluded."""
    node = schema() if node is None else node
    for key, child in node.get("properties", {}).items():
        if key == "$schema":
            continue
        path = prefix + (key,)
        yield path, child
        if is_object(child):
            yield from iter_keys(child, path)


def leaf_paths() -> list[KeyPath]:
    """Key paths of every value that is not itself a section (lists count as values)."""
    return [path for path, node in iter_keys() if not is_object(node)]


def defaults(node: dict[str, Any] | None = None) -> dict[str, Any]:
    """The nested default config the schema declares (sections expanded, `$schema` left out)."""
    node = schema() if node is None else node
    result: dict[str, Any] = {}
    for key, child in node.get("properties", {}).items():
        if key == "$schema":
            continue
        result[key] = defaults(child) if is_object(child) else copy.deepcopy(child.get("default"))
    return result


def dotted(path: Sequence[str | int]) -> str:
    """A key path as users write it: `strategies.purgeErrors.turns`, list items as `[2]`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + part
    return text or "(top level)"
