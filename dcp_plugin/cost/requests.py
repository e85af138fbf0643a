"""What one request costs in base-input-token units, given how much of its prompt the cache still holds."""

from __future__ import annotations

from dcp_plugin.cost.prices import Pricing


def request_cost(prompt: float, cached: float, pricing: Pricing) -> float:
    """``cached`` tokens at the read price, the rest at the write (uncached) price.

    ``cached`` is the longest prefix byte-identical to the previous request while the cache
    is warm, 0 when it is cold; with pricing ``none`` every token costs the base price.
    """
    cached = min(max(cached, 0.0), prompt)
    return pricing.read * cached + pricing.write * (prompt - cached)


def net_sentence(cost_without: float, cost_with: float) -> str | None:
    """`5.4% cheaper than without the plugin` (or `... more expensive`), None before any request was priced."""
    if cost_without <= 0:
        return None
    percent = 100 * (cost_without - cost_with) / cost_without
    if percent >= 0:
        return f"{percent:.1f}% cheaper than without the plugin"
    return (
        f"{-percent:.1f}% more expensive than without the plugin: its placeholders changed parts the provider "
        "had cached, which it then processed again"
    )
