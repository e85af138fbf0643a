"""The prompt-cache cost model: prices per provider family, and what a request costs with a cached prefix."""

from dcp_plugin.cost.prices import FAMILIES, Pricing, family_of, pricing_for
from dcp_plugin.cost.requests import net_sentence, request_cost

__all__ = ["FAMILIES", "Pricing", "family_of", "net_sentence", "pricing_for", "request_cost"]
