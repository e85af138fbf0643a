"""What the prunable lists in force add to every request, kept as decisions are applied."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.engine import request_points
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import make_config


def _summed(state: SessionState) -> int:
    """The definition: minus the savings of every applied list decision not superseded."""
    return -sum(d.tokens_saved for d in state.applied if d.is_list and not d.superseded)


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=1, max_value=10_000), st.integers(min_value=1, max_value=4))
def test_list_tokens_equal_the_sum_over_the_lists_in_force_at_every_request(seed: int, every: int) -> None:
    messages = generate_session(160, seed=seed)["messages"]
    config = make_config(tools={"nudgeFrequency": every}, cache={"scheduler": True})
    state = SessionState("lists", config, DEFAULT_DIRECTORY, tools_offered=True)
    seen_lists = False
    for count in sorted({*request_points(messages), len(messages)}):
        state.update(messages[:count])
        assert state.list_tokens == _summed(state)
        seen_lists = seen_lists or any(d.is_list for d in state.applied)
    assert seen_lists  # the sessions do write lists, so the sums were not all of nothing
