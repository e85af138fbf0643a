"""model_ref's fast reading of a message's info answers as its rule, written out, does, for every shape."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.model.refs import ModelRef, model_fields, model_ref


def text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def reference(value: object) -> ModelRef | None:
    """The rule as it reads: a nested model first (without a modelID), a host object's ``id``, the limit."""
    if not isinstance(value, Mapping):
        return None
    nested = value.get("model")
    if isinstance(nested, Mapping) and not text(value.get("modelID")):
        inner = reference(nested)
        if inner is not None:
            return inner
    host_object = "role" not in value and ("limit" in value or "providerID" in value)
    model_id = text(value.get("modelID")) or (text(value.get("id")) if host_object else None)
    limit = value.get("limit")
    context = limit.get("context") if isinstance(limit, Mapping) else None
    context = context if isinstance(context, int) and not isinstance(context, bool) and context > 0 else None
    provider_id = text(value.get("providerID"))
    if model_id is None and provider_id is None and context is None:
        return None
    return ModelRef(provider_id, model_id, context)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.sampled_from(["", "m", "p", "x"]))
_KEYS = st.sampled_from(["modelID", "providerID", "id", "role", "limit", "model"])


def _infos(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    mappings = st.dictionaries(_KEYS, inner, max_size=5)
    return mappings | mappings.map(MappingProxyType) | st.dictionaries(st.just("context"), _SCALARS, max_size=1)


_INFOS = st.recursive(_SCALARS, _infos, max_leaves=10)


@settings(max_examples=400)
@given(_infos(_INFOS))
def test_model_ref_reads_every_shape_as_the_rule_says(value: Any) -> None:
    expected = reference(value)
    assert model_ref(value) == expected
    fields = model_fields(value)
    assert fields == (None if expected is None else (expected.provider_id, expected.model_id, expected.context_limit))
