"""The Fenwick tree's sums equal a plain list's after every operation (its append builds nodes without a query)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.fenwick import Fenwick


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 10**6), st.integers(-500, 500)), max_size=80))
def test_every_prefix_and_range_equals_a_plain_list_after_every_operation(operations: list[tuple[bool, int, int]]) -> None:
    tree = Fenwick()
    plain: list[int] = []
    for grow, a, b in operations:
        if grow or not plain:
            tree.append(b)
            plain.append(b)
        else:
            position = a % len(plain)
            tree.add(position, b)
            plain[position] += b
        assert len(tree) == len(plain)
        assert tree.total == sum(plain)
        for end in range(-2, len(plain) + 3):
            assert tree.prefix(end) == sum(plain[: max(end, 0)])
        start = a % (len(plain) + 1)
        assert tree.range(start, len(plain)) == sum(plain[start:])
