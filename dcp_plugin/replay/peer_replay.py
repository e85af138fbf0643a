"""The peer rules and the plugin replayed the same way: one session, priced and checked for anchors, with re-reads.

``dcp replay --html --peers`` draws these curves beside the plugin's, and ``python -m benchmarks.peers``
tabulates them over a corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.model.tokens import message_prompt_tokens
from dcp_plugin.replay.anchors import AnchorTotals
from dcp_plugin.replay.engine import model_key, prompt_overhead, replay, session_reports, with_pricing
from dcp_plugin.replay.peer_rules import Patches, Rule
from dcp_plugin.replay.pricing import CacheAccountant, ReplayTotals, SentRequest
from dcp_plugin.replay.recovery import RecordedWalk, RecoveryTotals, net_after_recovery


@dataclass
class Session:
    """One session to replay."""

    name: str
    messages: list[dict[str, Any]]
    directory: str

    @property
    def peak_prompt(self) -> int:
        """The largest prompt of the session without pruning (estimated, with the fixed overhead)."""
        tokens = [message_prompt_tokens(m) for m in self.messages]
        return prompt_overhead(self.messages) + sum(tokens)


@dataclass
class Outcome:
    """One policy on one session under one pricing."""

    policy: str
    session: str
    pricing: str
    costs: ReplayTotals
    anchors: AnchorTotals
    tokens_without: int
    tokens_with: int
    recovery: RecoveryTotals = field(default_factory=RecoveryTotals)
    recovered: ReplayTotals | None = None  # the same policy with forced re-reads

    @property
    def net_percent(self) -> float:
        return self.costs.net_percent or 0.0

    @property
    def net_after_recovery(self) -> float:
        return net_after_recovery(self.costs, self.recovered) or 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "session": self.session,
            "pricing": self.pricing,
            "cost_without": round(self.costs.cost_without, 1),
            "cost_with": round(self.costs.cost_with, 1),
            "net_saved_percent": round(self.net_percent, 2),
            "tokens_without": self.tokens_without,
            "tokens_with": self.tokens_with,
            "prefix_breaks": self.costs.prefix_breaks,
            "anchors": self.anchors.to_dict(),
            **({**self.recovery.to_dict(), "net_saved_percent_after_recovery": round(self.net_after_recovery, 2)}
               if self.recovered is not None else {}),
        }


def replay_rule(
    session: Session,
    rule: Callable[[list[dict[str, Any]]], Rule],
    pricings: Sequence[str],
    curves: list[list[tuple[int, float]]] | None = None,
) -> list[Outcome]:
    """A peer rule over every request of the session, priced under each pricing and checked like the plugin's replay.

    A rule never looks at prices, so it runs once and every pricing's accountant reads the same requests;
    then once more, fresh, with forced re-reads (:mod:`dcp_plugin.replay.recovery`). ``rule`` makes the
    rule over a message list. ``curves``: one list per pricing, given each request's (tokens sent, cost)
    under the rule without re-reads (the HTML report's peer curves).
    """
    plain = _rule_pass(session, rule, pricings, recover=False, curves=curves)
    again = _rule_pass(session, rule, pricings, recover=True)
    return [replace(outcome, recovery=other.recovery, recovered=other.costs)
            for outcome, other in zip(plain, again, strict=True)]


def _rule_pass(session: Session, make: Callable[[list[dict[str, Any]]], Rule], pricings: Sequence[str],
               recover: bool, curves: list[list[tuple[int, float]]] | None = None) -> list[Outcome]:
    messages = list(session.messages)  # the walk puts its re-reads in here; the rule reads the same list
    rule = make(messages)
    caches = [with_pricing(DcpConfig(), pricing).cache for pricing in pricings]
    overheads = session_reports(messages).overheads
    estimates = [message_prompt_tokens(m) for m in messages]
    accountants = [CacheAccountant(estimates, overheads) for _ in pricings]
    walk = RecordedWalk(messages, recover, accountants)
    without = with_ = 0
    for request in walk:
        tokens = accountants[0].tokens(request.begin, request.end)
        patches: Patches = rule.at(request, accountants[0].overhead_at(request.begin) + tokens)
        saved = sum(t for _, t in patches.values())
        for index, (accountant, cache) in enumerate(zip(accountants, caches, strict=True)):
            cost = accountant.add(
                SentRequest(
                    request.begin,
                    request.end,
                    request.time_ms,
                    model_key(request.model),
                    pricing_for(request.model, cache),
                    tokens,
                    saved,
                    patches,
                )
            )
            if curves is not None:
                curves[index].append((tokens - saved, cost.cost_with))
        walk.check(request, patches, dict.fromkeys(patches, rule.name))
        without, with_ = without + tokens, with_ + tokens - saved
    return [
        Outcome(rule.name, session.name, pricing, accountant.totals, walk.anchors.totals, without, with_,
                walk.recovery)
        for pricing, accountant in zip(pricings, accountants, strict=True)
    ]


def replay_ours(session: Session, config: DcpConfig, label: str, pricing: str) -> Outcome:
    """The plugin with ``config`` on the session, through a real pluggy host (and again with forced re-reads)."""
    report = replay(session.messages, session.directory, config, pricing=pricing, recovery=True)
    return Outcome(label, session.name, pricing, report.costs, report.anchors, report.total_without, report.total_with,
                   report.recovery, report.recovered)
