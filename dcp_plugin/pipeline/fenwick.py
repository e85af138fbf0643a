"""A growable Fenwick tree: prefix sums of per-message token counts in O(log n) per query or update."""

from __future__ import annotations

from mypy_extensions import mypyc_attr

# Prefixes ending this close to the end are the total less the few values after them: a sum over
# a short slice runs in C, where the tree's walk takes a Python step per set bit of ``end``. The
# scheduler asks nearly every query within a few messages of the newest one.
NEAR_END = 24


@mypyc_attr(allow_interpreted_subclasses=True)
class Fenwick:
    """Integer values at positions 0..len-1 with fast point updates and prefix sums."""

    __slots__ = ("_tree", "_values", "total")

    def __init__(self) -> None:
        self._tree: list[int] = [0]  # 1-based internal array
        self._values: list[int] = []
        self.total = 0  # the sum of every value: most queries ask for all of them

    def __len__(self) -> int:
        return len(self._values)

    def append(self, value: int) -> None:
        """Add a position at the end holding ``value``."""
        tree = self._tree
        index = len(tree)  # the new position, 1-based
        self._values.append(value)
        self.total += value
        # tree[i] covers (i - low, i]: the new value plus the nodes that tile (i - low, i - 1],
        # which are exactly those a prefix query from i - 1 visits before reaching i - low.
        covered = value
        stop = index - (index & -index)
        below = index - 1
        while below > stop:
            covered += tree[below]
            below -= below & -below
        tree.append(covered)

    def add(self, position: int, delta: int) -> None:
        """Add ``delta`` to the value at ``position``."""
        self._values[position] += delta
        self.total += delta
        index = position + 1
        tree = self._tree
        size = len(tree)
        while index < size:
            tree[index] += delta
            index += index & -index

    def value(self, position: int) -> int:
        """The value at ``position``."""
        return self._values[position]

    def prefix(self, end: int) -> int:
        """Sum of positions [0, end)."""
        values = self._values
        size = len(values)
        if end >= size:
            return self.total
        if end > size - NEAR_END and end > 0:
            # Most often the newest message alone lies past ``end``.
            return self.total - (values[end] if end == size - 1 else sum(values[end:]))
        tree = self._tree
        total = 0
        while end > 0:
            total += tree[end]
            end -= end & -end
        return total

    def range(self, start: int, end: int) -> int:
        """Sum of positions [start, end)."""
        return self.prefix(end) - self.prefix(start) if end > start else 0
