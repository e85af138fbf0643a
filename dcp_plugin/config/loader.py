"""Turn config files into a typed config: load one layer, then combine layers into DcpConfig."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dcp_plugin.config.discovery import global_dir
from dcp_plugin.config.earlier import sort_values
from dcp_plugin.config.layering import effective_origins, merge_layers
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.parse import parse_text, read_text
from dcp_plugin.config.problems import Problem
from dcp_plugin.config.schema import dotted
from dcp_plugin.config.schemaref import dangling_schema
from dcp_plugin.config.validate import validate_layer


@dataclass
class LayerResult:
    """What one file contributes: its valid keys (None = file skipped or absent) and its problems."""

    path: Path
    data: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Effective:
    """The typed config, its plain (camelCase) form and the origin of every value."""

    config: DcpConfig
    values: dict[str, Any]
    origins: dict[str, str]
    problems: list[Problem] = field(default_factory=list)


def load_layer(path: Path, st: os.stat_result | None = None) -> LayerResult:
    """Read, parse and validate one file; never raises for anything the file contains."""
    text, problem = read_text(path, st)
    if text is None:
        return LayerResult(path, None, [problem] if problem else [])
    parsed = parse_text(text, str(path))
    if parsed.data is None:
        return LayerResult(path, None, parsed.problems)
    schema_problem = dangling_schema(parsed.data, path, global_dir())
    # The defaults an earlier version wrote into the file are not the user's settings (config/earlier.py).
    data, problems = validate_layer(sort_values(text, parsed.data).own, str(path))
    return LayerResult(path, data, parsed.problems + problems + ([schema_problem] if schema_problem else []))


def load_config_file(path: Path) -> tuple[DcpConfig | None, list[str]]:
    """One file as the whole config (a CLI's --config): the config, None if unusable, and the messages."""
    layer = load_layer(path)
    effective = combine([layer])
    messages = [problem.render() for problem in layer.problems + effective.problems]
    return (effective.config if layer.data is not None else None), messages


def combine(layers: Sequence[LayerResult]) -> Effective:
    """Merge the usable layers (lowest first) over the defaults into the typed config."""
    merged, layer_origins = merge_layers([(str(layer.path), layer.data) for layer in layers if layer.data is not None])
    config, problems = to_model(merged, layer_origins)
    return Effective(config, plain(config), effective_origins(layer_origins), problems)


def to_model(merged: dict[str, Any], origins: dict[str, str]) -> tuple[DcpConfig, list[Problem]]:
    """DcpConfig from merged data; a value the model rejects falls back to its default.

    The schema already checked everything, so this only matters if schema and model drift.
    """
    problems: list[Problem] = []
    for _ in range(20):
        try:
            return DcpConfig.model_validate(merged), problems
        except ValidationError as exc:
            for error in exc.errors():
                loc = [str(part) for part in error["loc"] if not isinstance(part, int)]
                key = dotted(loc)
                problems.append(Problem("error", origins.get(key, "config"), f"{error['msg']}", key=key, fallback=tuple(loc)))
                _drop(merged, loc)
    return DcpConfig(), problems


def _drop(data: dict[str, Any], path: list[str]) -> None:
    node: Any = data
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(path[-1], None)
    elif path and isinstance(data, dict):
        data.pop(path[0], None)


def plain(config: DcpConfig) -> dict[str, Any]:
    """The config as JSON-ready camelCase data (tuples become lists)."""
    return config.model_dump(mode="json", by_alias=True)
