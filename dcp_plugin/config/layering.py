"""Merge config layers key by key (lists replace) and remember where each value came from."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dcp_plugin.config.problems import DEFAULT_ORIGIN
from dcp_plugin.config.schema import KeyPath, dotted, leaf_paths

SCHEMA_KEY = "$schema"


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: objects merge recursively, every other value (lists too) replaces."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def leaves(data: Mapping[str, Any], prefix: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """Every non-object value with its key path (validated layers are only a few levels deep)."""
    for key, value in data.items():
        path = prefix + (key,)
        if isinstance(value, Mapping):
            yield from leaves(value, path)
        else:
            yield path, value


def merge_layers(layers: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[dict[str, Any], dict[str, str]]:
    """Merge (source, data) layers lowest first; origins map dotted key -> source of each set value."""
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for source, data in layers:
        data = {k: v for k, v in data.items() if k != SCHEMA_KEY}
        merged = deep_merge(merged, data)
        for path, _ in leaves(data):
            origins[dotted(path)] = source
    return merged, origins


def effective_origins(layer_origins: Mapping[str, str]) -> dict[str, str]:
    """Origin of every key of the effective config: the file that set it, else `default`."""
    return {dotted(p): layer_origins.get(dotted(p), DEFAULT_ORIGIN) for p in leaf_paths()}
