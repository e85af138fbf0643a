"""The one definition of "the context now": the last reported prompt, less what was pruned since, plus what came after.

Every place that shows how full the context is (the toast, the nudge to the model, ``/dcp context``,
``dcp opencode context``, ``dcp replay``, ``Pruner.command()``) reads a snapshot built with this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mypy_extensions import mypyc_attr

# Requests remembered per session: the anchor is the newest reported step, so only the
# latest few requests are ever asked about.
SENT_MEMORY = 64

# Tokens the placeholders in force now take out of the first ``n`` messages (negative where the
# plugin's own text, a prunable list, adds to them).
PrunedBefore = Callable[[int], int]


def nothing_pruned(count: int) -> int:
    """The :data:`PrunedBefore` of a history without placeholders."""
    return 0


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass
class SentPrunes:
    """Per request sent (keyed by how many messages it carried): the tokens its placeholders took out.

    The provider's count for a request already left out what was pruned then; only what was
    pruned later (a sweep, a newer decision on an older output) comes off it again.
    """

    by_count: dict[int, int] = field(default_factory=dict)

    def sent(self, count: int, removed: int) -> None:
        self.by_count.pop(count, None)
        self.by_count[count] = removed
        while len(self.by_count) > SENT_MEMORY:
            del self.by_count[next(iter(self.by_count))]

    def at(self, count: int) -> int | None:
        return self.by_count.get(count)

    def clear(self) -> None:
        self.by_count.clear()


def pruned_since_report(anchor_index: int | None, count: int, pruned_before: PrunedBefore, sent: SentPrunes) -> int:
    """Fixed-ratio tokens to take off the prediction for ``count`` messages: what it counts whole but is pruned now.

    With an anchor (the newest step with a reported prompt, at ``anchor_index``), the request that
    produced it carried the messages before it: what is pruned there now beyond what was pruned
    then, plus everything pruned from the anchor on (the prediction estimates that content whole).
    Without an anchor the prediction estimates every message whole, so every placeholder counts.
    A request that is not remembered is taken to have had the placeholders in force now.
    """
    total = pruned_before(count)
    if anchor_index is None:
        return total
    then = sent.by_count.get(anchor_index)
    if then is not None:
        # (pruned there now - pruned then) + (total - pruned there now): what is pruned there
        # now cancels out, so it is not asked for (a prefix sum, at every request point of a walk).
        return total - then
    return total - pruned_before(anchor_index)
