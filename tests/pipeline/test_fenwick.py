"""The Fenwick tree's sums equal a plain list's after every operation (its append builds nodes without a query; near the end it sums the last values)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.fenwick import NEAR_END, Fenwick


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


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(10**6), 10**6), max_size=3 * NEAR_END), st.lists(st.tuples(st.integers(0, 10**4), st.integers(-50, 50)), max_size=20))
def test_a_prefix_near_the_end_equals_the_sum_the_trees_walk_gives(values: list[int], changes: list[tuple[int, int]]) -> None:
    tree = Fenwick()
    for value in values:
        tree.append(value)
    plain = list(values)
    for position, delta in changes if plain else ():
        tree.add(position % len(plain), delta)
        plain[position % len(plain)] += delta
    for end in range(len(plain) + 1):
        assert tree.prefix(end) == sum(plain[:end])
