"""assign_id spells the short id inline: the same id short_id gives, and one character more when it is taken."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.pipeline.ids import SHORT, assign_id, short_id


@given(st.text(max_size=40), st.integers(min_value=0, max_value=3))
def test_the_assigned_id_is_the_shortest_free_prefix_of_the_full_id(call_id: str, taken_lengths: int) -> None:
    taken = {short_id(call_id, SHORT + n) for n in range(taken_lengths)}
    assert assign_id(call_id, taken) == short_id(call_id, SHORT + taken_lengths)
