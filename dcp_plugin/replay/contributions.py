"""What each strategy buys on a replayed session: what the session loses when that strategy alone is off.

Each enabled strategy is left out in turn and the session replayed again with everything else
unchanged. Its contribution is the difference: the tokens sent and the net prompt-cache cost
it saves given the others. Leaving one out (rather than running each alone) answers the
question a user has, "what happens if I turn it off?", and counts overlaps honestly: an output
two strategies would both remove is worth nothing to either one alone, and what a strategy
changes for the others (the scheduler's batches, the context that triggers masking) is part of
its effect. So the contributions need not add up to the whole saving.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.strategies import REGISTRY
from dcp_plugin.replay.engine import ReplayReport

Replay = Callable[[DcpConfig, str], ReplayReport]  # (config, label for progress) -> report


@dataclass(frozen=True, slots=True)
class Contribution:
    """One strategy's share of a replay: what turning it off would add back."""

    strategy: str
    tokens_saved: int  # over every request of the session
    net_saved: float  # in base-input-token units, prompt caching included

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "tokens_saved": self.tokens_saved, "net_saved": round(self.net_saved, 1)}


def enabled_strategies(config: DcpConfig) -> list[str]:
    """The strategies the config turns on, in registry order."""
    return [spec.name for spec in REGISTRY if config.strategy_section(spec.name).enabled]


def without(config: DcpConfig, name: str) -> DcpConfig:
    """``config`` with the strategy ``name`` turned off and nothing else changed."""
    data = config.model_dump(mode="json", by_alias=True)
    data["strategies"][name]["enabled"] = False
    return DcpConfig.model_validate(data)


def tokens_saved(report: ReplayReport) -> int:
    """Tokens the plugin kept out of all the session's requests."""
    return report.total_without - report.total_with


def contributions(full: ReplayReport, config: DcpConfig, run: Replay) -> list[Contribution]:
    """Each enabled strategy's contribution to ``full`` (a replay with ``config``), one replay each."""
    out = []
    for name in enabled_strategies(config):
        rest = run(without(config, name), f"replaying without {name}")
        out.append(
            Contribution(name, tokens_saved(full) - tokens_saved(rest), full.costs.saved - rest.costs.saved)
        )
    return out
