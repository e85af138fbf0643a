"""The schema file: well formed, documented, shipped, and in agreement with the pydantic model."""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import annotated_types
import jsonschema
import pytest
from pydantic import BaseModel

from dcp_plugin.config import schema as schema_mod
from dcp_plugin.config.model import DcpConfig
from tests.support.paths import ROOT


def _model_class(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _walk_schema(node: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    out = {}
    for key, child in node["properties"].items():
        if key == "$schema":
            continue
        out[prefix + key] = child
        if schema_mod.is_object(child):
            out.update(_walk_schema(child, prefix + key + "."))
    return out


def _walk_model(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    out = {}
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        out[key] = field
        sub = _model_class(field.annotation)
        if sub is not None:
            out.update(_walk_model(sub, key + "."))
    return out


SCHEMA_KEYS = _walk_schema(schema_mod.schema())
MODEL_FIELDS = _walk_model(DcpConfig)


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(schema_mod.schema())
    assert schema_mod.schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_and_model_have_the_same_keys() -> None:
    assert sorted(SCHEMA_KEYS) == sorted(MODEL_FIELDS)


def test_schema_and_model_have_the_same_defaults() -> None:
    assert schema_mod.defaults() == DcpConfig().model_dump(mode="json", by_alias=True)


@pytest.mark.parametrize("key", sorted(SCHEMA_KEYS))
def test_every_key_has_description_type_and_default(key: str) -> None:
    node = SCHEMA_KEYS[key]
    assert node.get("description", "").strip()
    kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
    assert kinds and set(kinds) <= {"boolean", "integer", "number", "string", "array", "object"}
    assert "default" in node


@pytest.mark.parametrize("key", sorted(SCHEMA_KEYS))
def test_schema_type_matches_model_type(key: str) -> None:
    annotation = MODEL_FIELDS[key].annotation
    expected = SCHEMA_KEYS[key]["type"]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        # One of several forms (a tier name, a token count, a fraction): each form is an anyOf branch.
        branches = SCHEMA_KEYS[key]["anyOf"]
        assert sorted(b["type"] for b in branches) == sorted(_schema_type(a) for a in typing.get_args(annotation))
        assert sorted(set(expected)) == sorted({"number" if b["type"] == "integer" else b["type"] for b in branches})
    elif typing.get_origin(annotation) is dict:
        # A map from tool names to lists of field names.
        assert typing.get_args(annotation) == (str, tuple[str, ...])
        assert expected == "object" and "properties" not in SCHEMA_KEYS[key]
        assert SCHEMA_KEYS[key]["additionalProperties"]["items"]["type"] == "string"
    elif _model_class(annotation):
        assert expected == "object"
        assert SCHEMA_KEYS[key]["additionalProperties"] is False
    elif annotation is bool:
        assert expected == "boolean"
    elif annotation is int:
        assert expected == "integer"
    elif annotation is float:
        assert expected == "number"
    elif typing.get_origin(annotation) is typing.Literal or annotation is str:
        assert expected == "string"
    else:
        assert typing.get_origin(annotation) is tuple and typing.get_args(annotation) == (str, ...)
        assert expected == "array" and SCHEMA_KEYS[key]["items"]["type"] == "string"


def _schema_type(annotation: Any) -> str:
    """The JSON type one branch of a union annotation accepts."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Literal:
        return "string"
    return {int: "integer", float: "number", str: "string", bool: "boolean"}[annotation]


@pytest.mark.parametrize("key", sorted(SCHEMA_KEYS))
def test_schema_enum_matches_model_literal(key: str) -> None:
    annotation = MODEL_FIELDS[key].annotation
    literal = list(typing.get_args(annotation)) if typing.get_origin(annotation) is typing.Literal else None
    assert SCHEMA_KEYS[key].get("enum") == literal


@pytest.mark.parametrize("key", sorted(SCHEMA_KEYS))
def test_schema_minimum_matches_model_bound(key: str) -> None:
    bounds = [m.ge for m in MODEL_FIELDS[key].metadata if isinstance(m, annotated_types.Ge)]
    assert SCHEMA_KEYS[key].get("minimum") == (bounds[0] if bounds else None)


@pytest.mark.parametrize("key", sorted(SCHEMA_KEYS))
def test_schema_maximum_matches_model_bound(key: str) -> None:
    bounds = [m.le for m in MODEL_FIELDS[key].metadata if isinstance(m, annotated_types.Le)]
    assert SCHEMA_KEYS[key].get("maximum") == (bounds[0] if bounds else None)


def test_turns_minimum_is_one_everywhere() -> None:
    assert SCHEMA_KEYS["turnProtection.turns"]["minimum"] == 1
    assert SCHEMA_KEYS["strategies.purgeErrors.turns"]["minimum"] == 1


def test_unknown_keys_are_flagged_by_every_section_of_the_schema() -> None:
    assert schema_mod.schema()["additionalProperties"] is False
    sections = [node for node in SCHEMA_KEYS.values() if schema_mod.is_object(node)]
    assert all(node["additionalProperties"] is False for node in sections)


def test_schema_is_loaded_from_the_installed_package() -> None:
    path = schema_mod.schema_path()
    assert path is not None and path.name == "dcp.schema.json" and path.parent.name == "schema"
    assert json.loads(path.read_text()) == schema_mod.schema()


def test_repo_top_level_schema_is_the_packaged_file() -> None:
    top = ROOT / "schema" / "dcp.schema.json"
    assert top.read_bytes() == (ROOT / "dcp_plugin" / "schema" / "dcp.schema.json").read_bytes()


def test_schema_uri_is_a_file_uri_of_the_installed_schema() -> None:
    uri = schema_mod.schema_uri()
    assert uri is not None and uri.startswith("file://") and uri.endswith("/schema/dcp.schema.json")


def test_dotted_key_path_formats_list_entries() -> None:
    assert schema_mod.dotted(["strategies", "purgeErrors", "protectedTools", 2]) == "strategies.purgeErrors.protectedTools[2]"
    assert schema_mod.dotted([]) == "(top level)"


def test_every_known_key_is_listed_once() -> None:
    paths = [schema_mod.dotted(p) for p, _ in schema_mod.iter_keys()]
    assert len(paths) == len(set(paths)) == len(SCHEMA_KEYS)


def test_every_config_section_has_its_strategy_in_the_same_order() -> None:
    from dcp_plugin.config.strategies import SECTIONS
    from dcp_plugin.pipeline.strategies import REGISTRY, SPECS

    assert [(spec.name, spec.config) for spec in REGISTRY] == list(SECTIONS)
    assert sorted(SPECS) == sorted(name for name, _ in SECTIONS)
