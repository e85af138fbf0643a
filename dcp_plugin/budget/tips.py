"""Context tips for hosts: which of context-warn / context-high / context-critical applies, and its wording."""

from __future__ import annotations

from typing import Literal

from dcp_plugin.budget.thresholds import Thresholds, Tier, tier

TipId = Literal["context-warn", "context-high", "context-critical"]
TIP_IDS: tuple[TipId, ...] = ("context-warn", "context-high", "context-critical")
TIP_OF_TIER: dict[Tier, TipId | None] = {
    "below-warn": None,
    "warn": "context-warn",
    "auto": "context-high",
    "hard": "context-critical",
}

# Used only when no thresholds are known (no window): the severity edges at which the
# ladder's tiers usually sit.
FALLBACK_RATIOS: tuple[tuple[float, TipId], ...] = (
    (0.97, "context-critical"),
    (0.85, "context-high"),
    (0.70, "context-warn"),
)


def context_tip(tokens: int, thresholds: Thresholds | None, ratio: float | None = None) -> TipId | None:
    """The tip for ``tokens``: warn ≤ t < auto → context-warn, auto ≤ t < hard →
    context-high, t ≥ hard → context-critical, below warn → None.

    The bands never overlap; in small windows where hard equals auto, context-high
    is empty. Without thresholds the usage ratio decides (70/85/97 %); with neither,
    there is no tip.
    """
    if thresholds is not None:
        return TIP_OF_TIER[tier(tokens, thresholds)]
    if ratio is None:
        return None
    for edge, tip in FALLBACK_RATIOS:
        if ratio >= edge:
            return tip
    return None


def tip_text(tip: TipId, tokens: int, limit: int) -> str:
    """One sentence a host can show for a tip: how full the context is and what the user can do.

    It never says the host compacts (OpenCode, for one, does not at these points): only that compacting is advised.
    """
    used = f"{tokens:,} of {limit:,} tokens" if limit > 0 else f"{tokens:,} tokens"
    if tip == "context-warn":
        return f"Context is filling up ({used}); compacting will be advised soon."
    if tip == "context-high":
        return f"Context is past the point where compacting is advised ({used}); compact the session to keep room for its summary."
    return f"Context reached its hard limit ({used}): compact the session before it overflows."
