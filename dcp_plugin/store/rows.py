"""What the store reads and writes, as plain values: never any conversation content."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dcp_plugin.cost.totals import CostTotals


class DecisionRow(NamedTuple):
    """One pruned call as persisted: never its content.

    The queue takes plain tuples of the same four values too (:data:`PrunedRow`): a first sight
    queues a row for every decision of its history, and an exact tuple costs no constructor call
    and leaves the cyclic collector's watch at its first pass (a named tuple stays watched).
    """

    call_id: str
    tool: str
    strategy: str
    tokens_saved: int


# (call_id, tool, strategy, tokens_saved): a DecisionRow or a plain tuple of its values.
PrunedRow = tuple[str, str, str, int]


@dataclass(frozen=True, slots=True)
class Restore:
    """One call of the model's restore tool as persisted: how many outputs it brought back, and their tokens."""

    call_id: str
    outputs: int
    tokens: int


@dataclass(slots=True)
class SessionBatch(CostTotals):
    """What one flush writes for one session; its totals are deltas added to the stored ones.

    The persistence queue holds one per session until a flush takes it whole.
    """

    session_id: str
    decisions: list[PrunedRow] = field(default_factory=list)
    manual: dict[str, str] = field(default_factory=dict)
    snapshot: Mapping[str, Any] | None = None
    restores: list[Restore] = field(default_factory=list)
    pins: dict[str, bool] = field(default_factory=dict)  # call id -> pinned (True) or unpinned (False)

    def empty(self) -> bool:
        return not (
            self.decisions
            or self.manual
            or self.requests
            or self.tokens_saved_sent
            or self.snapshot
            or self.restores
            or self.pins
        )

    def give_back(self, batch: SessionBatch) -> None:
        """Queue again, before what was queued since, a batch that could not be written."""
        self.decisions[:0] = batch.decisions
        self.manual = {**batch.manual, **self.manual}
        self.requests += batch.requests
        self.tokens_saved_sent += batch.tokens_saved_sent
        self.cost_without += batch.cost_without
        self.cost_with += batch.cost_with
        self.rewritten += batch.rewritten
        self.restores[:0] = batch.restores
        self.pins = {**batch.pins, **self.pins}
        if self.snapshot is None:
            self.snapshot = batch.snapshot


@dataclass(slots=True)
class StoredSession:
    """A session as found in the store on first sight."""

    manual: dict[str, str] = field(default_factory=dict)
    pruned: set[str] = field(default_factory=set)
    pinned: set[str] = field(default_factory=set)
    snapshot: dict[str, Any] | None = None
    requests: int = 0
    tokens_saved_sent: int = 0
    complete: bool = True  # False: the store could not be read, so what it holds is not known yet


@dataclass(slots=True)
class Stats(CostTotals):
    """Pruning statistics of one session or of all of them."""

    by_strategy: dict[str, tuple[int, int]] = field(default_factory=dict)
    sessions: int = 0
    restores: int = 0  # calls of the model's restore tool
    restored_outputs: int = 0
    restored_tokens: int = 0

    @property
    def calls(self) -> int:
        return sum(count for count, _ in self.by_strategy.values())

    @property
    def tokens_saved(self) -> int:
        return sum(tokens for _, tokens in self.by_strategy.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "requests": self.requests,
            "calls_pruned": self.calls,
            "tokens_saved_per_request": self.tokens_saved,
            "tokens_saved_over_requests": self.tokens_saved_sent,
            "cost_without_plugin": round(self.cost_without, 1),
            "cost_with_plugin": round(self.cost_with, 1),
            "net_saved": round(self.saved, 1),
            "net_saved_percent": None if self.net_percent is None else round(self.net_percent, 2),
            "rewritten_tokens": self.rewritten,
            "restores": {"calls": self.restores, "outputs": self.restored_outputs, "tokens": self.restored_tokens},
            "by_strategy": {
                name: {"calls": count, "tokens_saved_per_request": tokens}
                for name, (count, tokens) in sorted(self.by_strategy.items())
            },
        }
