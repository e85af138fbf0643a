"""CompactJson encodes exactly what the json module's compact encoder does, and fails the same way."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.model.jsontext import LONG_TEXT, CompactJson, compact_length, string_length

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def dumps(value: Any, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str, sort_keys=sort_keys)


@given(JSON, st.booleans())
def test_a_json_value_is_encoded_as_json_dumps_encodes_it(value: Any, sort_keys: bool) -> None:
    assert CompactJson(sort_keys).encode(value) == dumps(value, sort_keys)


def test_what_json_cannot_encode_is_encoded_as_its_string() -> None:
    value = {"when": object.__new__(type("Stamp", (), {"__str__": lambda self: "noon"})), "set": {1}}
    assert CompactJson().encode(value) == dumps(value) == '{"when":"noon","set":"{1}"}'


def test_a_cycle_is_the_value_error_json_raises() -> None:
    looped: dict[str, Any] = {"a": 1}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular reference"):
        CompactJson().encode(looped)


def test_a_key_json_cannot_encode_is_the_type_error_json_raises() -> None:
    with pytest.raises(TypeError, match="keys must be"):
        CompactJson().encode({(1, 2): "x"})


# Characters where the two escapers CompactJson uses part ways (DEL, non-ASCII, lone surrogates),
# what reads like an escape ("\\u"), and what both escape alike (quotes, controls).
_EDGES = st.text(alphabet=st.sampled_from(["a", "u", "\\", '"', "\x7f", "\x00", "\n", "é", "\u2028", "😀", "\ud800"]), max_size=12)
_EDGE_JSON = st.recursive(
    st.none() | st.integers() | _EDGES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_EDGES, inner, max_size=3),
    max_leaves=8,
)


@given(_EDGE_JSON, st.booleans())
def test_text_where_the_ascii_and_unicode_escapers_differ_is_encoded_as_json_dumps_encodes_it(
    value: Any, sort_keys: bool
) -> None:
    assert CompactJson(sort_keys).encode(value) == dumps(value, sort_keys)


_ASCII_EDGES = st.text(alphabet=st.sampled_from(["a", "u", "\\", '"', "\x7f", "\x00", "\n"]), max_size=6)


@given(st.dictionaries(_ASCII_EDGES, _ASCII_EDGES | st.none() | st.booleans() | st.integers() | st.floats(), max_size=4))
def test_a_flat_dict_of_ascii_text_is_encoded_as_json_dumps_encodes_it(value: dict[str, Any]) -> None:
    assert CompactJson().encode(value) == dumps(value)


# Text long enough to be counted rather than written, with every kind of escape in it.
_LONG_EDGES = st.text(
    alphabet=st.sampled_from(["a", " ", "\\", '"', "\x7f", "\x00", "\x1f", "\n", "\t", "\r", "\b", "\f", "é", "😀", "\ud800"]),
    min_size=LONG_TEXT - 2,
    max_size=LONG_TEXT * 3,
)


@given(_EDGES | _LONG_EDGES)
def test_the_counted_length_of_a_text_is_that_of_its_json_string(text: str) -> None:
    assert string_length(text) == len(dumps(text))


_FLAT = st.dictionaries(
    _EDGES | _LONG_EDGES,
    _EDGES | _LONG_EDGES | st.none() | st.booleans() | st.integers() | st.floats() | st.lists(st.integers(), max_size=2),
    max_size=4,
)


@given(_FLAT | _EDGE_JSON)
def test_the_counted_length_of_a_value_is_that_of_its_encoding(value: Any) -> None:
    encoding = CompactJson()
    assert compact_length(value, encoding) == len(encoding.encode(value))


def test_a_key_json_cannot_encode_fails_the_counted_length_as_it_fails_the_encoding() -> None:
    with pytest.raises(TypeError, match="keys must be"):
        compact_length({"a": "b", (1, 2): "x"}, CompactJson())
