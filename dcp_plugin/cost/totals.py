"""Requests summed: what they cost with the plugin and without it, and what its placeholders made the provider redo."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, kw_only=True)
class CostTotals:
    """Sums over requests, in base-input-token units (see :func:`~dcp_plugin.cost.requests.request_cost`).

    One type for every place that adds requests up: the scheduler's running totals of a session,
    the store's statistics (and the deltas it writes), and a replay's independent pricing.
    """

    requests: int = 0
    cost_without: float = 0.0
    cost_with: float = 0.0
    rewritten: int = 0  # tokens processed again because a placeholder changed an already-cached part
    tokens_saved_sent: int = 0  # tokens the placeholders removed, summed over the requests

    @property
    def saved(self) -> float:
        """What the plugin saved after its own cache rewrites (negative: it made the requests cost more)."""
        return self.cost_without - self.cost_with

    @property
    def net_percent(self) -> float | None:
        """The net saving as a share of what the same requests cost without the plugin; None before any was priced."""
        return 100 * self.saved / self.cost_without if self.cost_without > 0 else None
