"""A shrunk input fits the input the host sends only if it is that input with long strings replaced by placeholders."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.pipeline.freshness import shrunk_from

PLACEHOLDER = "[dcp: shrunk]"
LEAVES = st.none() | st.booleans() | st.integers() | st.text(max_size=40)
INPUTS = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20
)


def shrink(value: Any) -> Any:
    """``value`` with every string longer than the placeholder replaced by it, at every depth."""
    if isinstance(value, str):
        return PLACEHOLDER if len(value) > len(PLACEHOLDER) else value
    if isinstance(value, list):
        return [shrink(item) for item in value]
    if isinstance(value, dict):
        return {key: shrink(item) for key, item in value.items()}
    return value


@given(INPUTS)
def test_an_input_with_its_long_strings_replaced_by_placeholders_fits_it(value: Any) -> None:
    assert shrunk_from(shrink(value), value)


@given(INPUTS)
def test_an_input_the_host_left_as_it_was_fits_itself(value: Any) -> None:
    assert shrunk_from(value, value)


@given(INPUTS, st.text(min_size=1, max_size=5))
def test_a_shrunk_input_does_not_fit_an_input_the_host_gave_another_key(value: Any, key: str) -> None:
    current = {"key": value}
    shrunk = {"key": shrink(value)}
    current[f"new {key}"] = 1
    assert not shrunk_from(shrunk, current)


@given(st.text(min_size=1, max_size=len(PLACEHOLDER)).filter(lambda text: text != PLACEHOLDER))
def test_a_placeholder_does_not_fit_a_string_no_longer_than_itself(text: str) -> None:
    assert not shrunk_from({"content": PLACEHOLDER}, {"content": text})
