"""The generated dcp.jsonc sets nothing: every key is shown with its default, commented out, and uncommenting works."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.config.earlier import nest as nested
from dcp_plugin.config.loader import combine, load_layer, plain
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.parse import MAX_JSON5_BYTES, blank_comments, parse_text
from dcp_plugin.config.profiles import PROFILES
from dcp_plugin.config.schema import KeyPath, defaults, iter_keys, leaf_paths, schema, schema_uri
from dcp_plugin.config.template import render

URI = "file:///config/opencode/dcp.schema.json"
LEAVES = leaf_paths()
_CLOSE = re.compile(r"^(\s*)// \},?$")


def key_lines(text: str) -> dict[KeyPath, tuple[int, int | None]]:
    """Each key's line in the rendered file, with the line closing it for a section (matched in schema order)."""
    lines = text.splitlines()
    found: dict[KeyPath, tuple[int, int | None]] = {}
    at = 0
    for path, _node in iter_keys():
        prefix = "  " * len(path) + f"// {json.dumps(path[-1])}: "
        at = next(i for i in range(at, len(lines)) if lines[i].startswith(prefix))
        found[path] = (at, None)
    for path, (line, _) in found.items():
        if lines[line].endswith("{"):
            pad = "  " * len(path)
            close = next(i for i in range(line + 1, len(lines)) if _CLOSE.match(lines[i]) and lines[i].startswith(pad + "//"))
            found[path] = (line, close)
    return found


def uncomment(text: str, paths: list[KeyPath], edits: dict[KeyPath, Any] | None = None) -> str:
    """The file a user makes by uncommenting ``paths`` (and their sections), with ``edits`` as new values."""
    lines = text.splitlines()
    where = key_lines(text)
    for path in paths:
        for depth in range(1, len(path) + 1):
            for index in where[path[:depth]]:
                if index is not None:
                    lines[index] = lines[index].replace("// ", "", 1)
        if edits and path in edits:
            line = where[path][0]
            comma = "," if lines[line].endswith(",") else ""
            lines[line] = lines[line].split(": ", 1)[0] + f": {json.dumps(edits[path])}{comma}"
    return "\n".join(lines) + "\n"


def load(text: str, tmp_path: Path) -> DcpConfig:
    path = tmp_path / "dcp.jsonc"
    path.write_text(text, encoding="utf-8")
    layer = load_layer(path)
    assert layer.problems == []
    return combine([layer]).config




def default_of(path: KeyPath) -> Any:
    node: Any = defaults()
    for part in path:
        node = node[part]
    return node


def test_the_global_file_parses_to_nothing_but_its_schema_line() -> None:
    parsed = parse_text(render(URI), "dcp.jsonc")
    assert parsed.problems == [] and parsed.data == {"$schema": URI}


def test_the_project_file_parses_to_nothing_but_its_schema_line() -> None:
    assert parse_text(render(URI, project=True), "dcp.jsonc").data == {"$schema": URI}


def test_a_file_without_a_schema_line_parses_to_an_empty_config() -> None:
    assert parse_text(render(None), "dcp.jsonc").data == {}


def test_every_key_is_shown_with_its_default() -> None:
    text = render(URI).splitlines()
    for path, (line, _) in key_lines(render(URI)).items():
        if path in LEAVES:
            assert text[line].strip().rstrip(",") == f"// {json.dumps(path[-1])}: {json.dumps(default_of(path))}"


def test_every_key_has_its_description_right_above_it() -> None:
    text = render(URI).splitlines()
    nodes = dict(iter_keys())
    for path, (line, _) in key_lines(render(URI)).items():
        start = max(i for i in range(line) if not text[i].strip() or text[i].strip().endswith("{")) + 1
        block = " ".join(text[i].strip().removeprefix("// ") for i in range(start, line))
        assert block == " ".join(nodes[path]["description"].split())


def test_the_header_says_values_are_commented_out_and_how_to_set_one() -> None:
    header = render(URI).split("{", 1)[0]
    assert "commented out" in header and "uncomment" in header


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(LEAVES), unique=True, max_size=12))
def test_uncommenting_keys_sets_exactly_those_keys_to_their_defaults(paths: list[KeyPath]) -> None:
    data = parse_text(uncomment(render(URI), paths), "dcp.jsonc").data
    assert data is not None
    data.pop("$schema")
    assert data == nested({path: default_of(path) for path in paths})


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(PROFILES)), st.none() | st.text(max_size=40))
def test_the_template_with_a_profile_chosen_is_that_profile_exactly(profile: str, uri: str | None) -> None:
    # Nothing the generated file writes by default overrides the profile a user picks in it.
    text = uncomment(render(uri), [("profile",)], {("profile",): profile})
    data = parse_text(text, "dcp.jsonc").data
    assert data is not None and data.pop("$schema", None) == (uri or None)
    assert DcpConfig.model_validate(data) == DcpConfig.model_validate({"profile": profile})


def test_an_uncommented_and_edited_value_is_in_force(tmp_path: Path) -> None:
    path = ("strategies", "maskOldOutputs", "trigger")
    config = load(uncomment(render(schema_uri()), [path], {path: 45000}), tmp_path)
    assert config.strategies.mask_old_outputs.trigger == 45000


def test_the_generated_file_loads_as_the_defaults(tmp_path: Path) -> None:
    assert plain(load(render(schema_uri()), tmp_path)) == plain(DcpConfig())


def test_the_schema_describes_every_key_the_template_lists() -> None:
    assert all(node.get("description") for _, node in iter_keys(schema()))


def test_the_generated_global_file_is_over_the_json5_size_with_few_characters_outside_comments() -> None:
    # README: values uncommented in the generated global file take JSON syntax.
    text = render("file:///home/me/.config/opencode/dcp.schema.json")
    outside = re.sub(r"\s+", "", blank_comments(text))
    assert len(text) > MAX_JSON5_BYTES and len(outside) < 100
