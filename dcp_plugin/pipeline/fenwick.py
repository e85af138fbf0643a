"""A growable Fenwick tree: prefix sums of per-message token counts in O(log n) per query or update."""

from __future__ import annotations


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
        index = len(self._values) + 1
        before = self.total  # the sum of positions [0, index - 1)
        self._values.append(value)
        self.total += value
        low = index & -index
        # tree[i] covers (i - low, i]: the new value plus the sums already covered below it.
        self._tree.append(value if low == 1 else value + before - self.prefix(index - low))

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
        if end >= len(self._values):
            return self.total
        end = max(end, 0)
        total = 0
        tree = self._tree
        while end > 0:
            total += tree[end]
            end -= end & -end
        return total

    def range(self, start: int, end: int) -> int:
        """Sum of positions [start, end)."""
        return self.prefix(end) - self.prefix(start) if end > start else 0
