"""decide's path for a whole output replacement gives what the general path (retag, realize, tokens_removed) gives."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.model.tokens import tokens_removed
from dcp_plugin.pipeline.decisions import CallRecord, Edit, ReplaceOutput, ShrinkInput, decide, realize, retag
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER

_outputs = st.none() | st.text(max_size=120) | st.just(DUPLICATE_PLACEHOLDER) | st.integers() | st.lists(st.text(max_size=5), max_size=3)
_states = st.builds(
    lambda status, output, has_output, compacted: {
        "status": status,
        "input": {"filePath": "a.py"},
        **({"output": output} if has_output else {}),
        **({"time": {"compacted": 1}} if compacted else {}),
    },
    st.sampled_from(["completed", "error", "running"]),
    _outputs,
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=400, deadline=None)
@given(_states, st.sampled_from([DUPLICATE_PLACEHOLDER, "[dcp: x]", "short", "[dcp: masked] (id ab12)"]), st.sampled_from([None, "ab12", "zz9x"]))
def test_a_replacement_decides_as_the_general_path(state: dict[str, Any], text: str, ident: str | None) -> None:
    _assert_decides_as_the_general_path(ReplaceOutput(text), state, ident)


def _assert_decides_as_the_general_path(edit: Edit, state: dict[str, Any], ident: str | None) -> None:
    """decide on ``state`` makes what retag, realize and tokens_removed make of ``edit``, or nothing when they do."""
    record = CallRecord("c1", "read", 1, 0, 0, None, None, 0, str(state["status"]), ident=ident)
    realized = realize(retag(edit, ident), state)  # type: ignore[arg-type]
    saved = tokens_removed(state, realized[0], realized[1]) if realized is not None else 0
    decision = decide(record, "s", edit, state)  # type: ignore[arg-type]
    if realized is None or saved <= 0:
        assert decision is None
    else:
        assert decision is not None
        assert (decision.field, decision.value, decision.cuts, decision.tokens_saved) == (*realized, saved)


# A time no host sends (a mapping that is no dict, a number) is read by the rule itself.
_times: st.SearchStrategy[object] = st.sampled_from(
    [None, {}, {"compacted": 0}, {"start": 1}, MappingProxyType({"compacted": 1}), MappingProxyType({}), 7]
)


@settings(max_examples=400, deadline=None)
@given(_outputs, _times, st.sampled_from([DUPLICATE_PLACEHOLDER, "[dcp: x]", ""]))
def test_a_replacement_saves_what_tokens_removed_says_whatever_time_the_state_holds(output: Any, time: Any, text: str) -> None:
    state = {"status": "completed", "output": output, "time": time}
    record = CallRecord("c1", "read", 1, 0, 0, None, None, 0, "completed")
    realized = realize(ReplaceOutput(text), state)  # type: ignore[arg-type]
    saved = tokens_removed(state, "output", text) if realized is not None else 0
    decision = decide(record, "s", ReplaceOutput(text), state)  # type: ignore[arg-type]
    assert (decision.tokens_saved if decision is not None else 0) == max(saved, 0)


_inputs = st.none() | st.dictionaries(
    st.sampled_from(["command", "filePath", "content", "n"]),
    st.none() | st.integers() | st.text(max_size=90) | st.lists(st.text(max_size=60), max_size=2),
    max_size=3,
)


@settings(max_examples=400, deadline=None)
@given(
    _inputs,
    st.sampled_from(["[dcp: input removed]", "[dcp: x]", "short"]),
    st.sampled_from([None, "ab12"]),
    st.sampled_from([frozenset(), frozenset({"filePath"})]),
)
def test_an_input_shrink_decides_as_the_general_path(tool_input: Any, text: str, ident: str | None, keep: frozenset[str]) -> None:
    _assert_decides_as_the_general_path(ShrinkInput(text, keep), {"status": "error", "input": tool_input, "error": "failed"}, ident)
