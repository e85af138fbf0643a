"""Which strategies a finished call or a moment of the session concerns, worked out once per kind of call.

A cold request observes every call of a long history and advances at every request it implies:
asking each strategy about a call it can never act on (an error, for a rule on completed reads)
costs a call per strategy per call. A strategy says which calls it looks at
(:func:`~.base.observes`) and whether it acts off request points (:func:`~.base.acts_off_points`);
the roster keeps, per tool and status, the observe methods of those that may act, in registry order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from mypy_extensions import mypyc_attr

from dcp_plugin.pipeline.strategies.base import (
    FinishedCall,
    Proposal,
    Strategy,
    acts_off_points,
    acts_with_time,
    observes,
)

Observer = tuple[str, Callable[[FinishedCall], Iterable[Proposal]]]

# Kinds of call remembered: a host names a handful of tools; a host inventing names without end
# gets its observers worked out per call instead of an ever-growing table.
MAX_KINDS = 512


@mypyc_attr(allow_interpreted_subclasses=True)
class Roster:
    """The strategies of one epoch (``strategies``, the list itself), sorted by the calls and moments they act on."""

    def __init__(self, strategies: Sequence[tuple[str, Strategy]]) -> None:
        self.strategies = strategies
        self.timed = [(name, strategy) for name, strategy in strategies if acts_with_time(strategy)]
        # Off request points only these act (the others measure the context, asked at points only).
        self.anytime = [(name, strategy) for name, strategy in self.timed if acts_off_points(strategy)]
        self._observers: dict[tuple[str, str], tuple[Observer, ...]] = {}

    def observers(self, tool: str, status: str) -> tuple[Observer, ...]:
        """The observe methods of the strategies that may index or propose anything for a call of ``tool`` with ``status``."""
        key = (tool, status)
        found = self._observers.get(key)
        if found is None:
            found = tuple((name, strategy.observe) for name, strategy in self.strategies if observes(strategy, tool, status))
            if len(self._observers) < MAX_KINDS:
                self._observers[key] = found
        return found
