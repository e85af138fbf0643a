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
