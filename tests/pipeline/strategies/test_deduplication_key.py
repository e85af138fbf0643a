"""Deduplication groups calls by a key equal exactly when their signatures are."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.strategies.deduplication import duplicate_key, duplicate_signature

IGNORED = {"bash": ("description",)}


class Named:
    """An object a host may hand in: the encoder writes it through str."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


_strings = st.sampled_from(["a", "b", "1", "true", "src/a.py", "\u00e9", "\ud800"])
_values = st.one_of(
    st.none(),
    _strings,
    st.integers(0, 1),
    st.sampled_from([-7, 10**18 - 1, 10**18, 2**70, 1.0]),
    st.booleans(),
    st.lists(_strings, max_size=1),
    st.dictionaries(_strings, st.one_of(st.none(), _strings), max_size=1),
    _strings.map(Named),
)
_keys = st.one_of(st.sampled_from(["filePath", "description", "1", "true", "a"]), st.integers(0, 1), st.booleans())
_inputs = st.one_of(st.dictionaries(_keys, _values, max_size=3), _values)
_calls = st.tuples(st.sampled_from(["read", "bash"]), _inputs)


@settings(max_examples=600, deadline=None)
@given(_calls, _calls)
def test_two_calls_share_a_key_exactly_when_they_share_a_signature(first: tuple[str, Any], second: tuple[str, Any]) -> None:
    same_key = duplicate_key(*first, IGNORED) == duplicate_key(*second, IGNORED)
    same_signature = duplicate_signature(*first, IGNORED) == duplicate_signature(*second, IGNORED)
    assert same_key == same_signature


@st.composite
def _written_alike(draw: st.DrawFn) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Two inputs the encoder writes alike: one string under one key, given as other types or with nulls."""
    key, value = draw(st.sampled_from(["1", "true", "filePath"])), draw(_strings)
    keys = [key, *([1] if key == "1" else [True] if key == "true" else [])]
    forms = st.builds(
        lambda k, v, nulls: {k: v, **dict.fromkeys(nulls)},
        st.sampled_from(keys),
        st.sampled_from([value, Named(value)]),
        st.lists(st.sampled_from(["offset", "limit"]), max_size=2),
    )
    return draw(forms), draw(forms)


@settings(max_examples=300, deadline=None)
@given(_written_alike(), st.sampled_from(["read", "bash"]))
def test_inputs_written_alike_share_a_key(inputs: tuple[dict[Any, Any], dict[Any, Any]], tool: str) -> None:
    first, second = inputs
    assert duplicate_signature(tool, first, IGNORED) == duplicate_signature(tool, second, IGNORED)
    assert duplicate_key(tool, first, IGNORED) == duplicate_key(tool, second, IGNORED)


# Forms of one key or value that compare equal, or that the encoder may write alike.
_KEY_FORMS: dict[Any, list[Any]] = {"1": [1, True], "2": [2], "10": [10], "true": [True], "a": ["a"]}
_VALUE_FORMS: dict[Any, list[Any]] = {"1": [1, True, 1.0, Named("1")], "a": [Named("a")], 10**18: [10**18, float(10**18)]}


@st.composite
def _lookalikes(draw: st.DrawFn) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Two inputs of the same items in other orders, some keys and values given in another form, some nulls or items added."""
    keys = draw(st.lists(st.sampled_from(sorted(_KEY_FORMS)), unique=True, max_size=4))
    items = [(key, draw(st.sampled_from(["1", "a", "b", 10**18, None]))) for key in keys]

    def form(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        return [
            (draw(st.sampled_from([key, *_KEY_FORMS[key]])), draw(st.sampled_from([value, *_VALUE_FORMS.get(value, [])])))
            for key, value in pairs
        ]

    first, other = form(items), form(draw(st.permutations(items)))
    if draw(st.booleans()):
        other.append((draw(st.sampled_from(["description", "offset"])), draw(st.sampled_from([None, "x"]))))
    return dict(first), dict(other)


@settings(max_examples=800, deadline=None)
@given(_lookalikes(), st.sampled_from(["read", "bash"]))
# Number keys are sorted as numbers, text keys as text: the same items, written in another order.
@example(({2: "a", 10: "b"}, {"2": "a", "10": "b"}), "read")
def test_inputs_of_several_items_share_a_key_exactly_when_they_share_a_signature(
    inputs: tuple[dict[Any, Any], dict[Any, Any]], tool: str
) -> None:
    first, second = inputs
    same_key = duplicate_key(tool, first, IGNORED) == duplicate_key(tool, second, IGNORED)
    assert same_key == (duplicate_signature(tool, first, IGNORED) == duplicate_signature(tool, second, IGNORED))
