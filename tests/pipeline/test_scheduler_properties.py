"""Invariants of the cache scheduler over generated sessions (hypothesis)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.prices import DEFAULTS, Pricing
from dcp_plugin.pipeline.decisions import CallRecord, Decision
from dcp_plugin.pipeline.scheduler import Point, Scheduler, _Previous
from dcp_plugin.replay.engine import replay
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

PRICINGS = ["anthropic", "anthropic-1h", "openai", "google", "none", "auto"]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

configs = st.builds(
    lambda supersede, purge_turns, protect: DcpConfig.model_validate(
        {
            "strategies": {"supersedeWrites": {"enabled": supersede}, "purgeErrors": {"turns": purge_turns}},
            "turnProtection": {"enabled": protect, "turns": 2},
        }
    ),
    st.booleans(),
    st.integers(1, 4),
    st.booleans(),
)


@SETTINGS
@given(st.integers(1, 10**6), st.integers(30, 160), st.sampled_from(PRICINGS), configs)
def test_with_the_scheduler_a_replayed_session_costs_at_most_the_overdraft_more_than_without_the_plugin(
    seed, size, pricing, config
):
    report = replay(generate_session(size, seed=seed)["messages"], DEFAULT_DIRECTORY, config, pricing=pricing)
    costs = report.costs
    assert costs.cost_with <= costs.cost_without * (1 + config.cache.overdraft) + 1e-6


@SETTINGS
@given(st.integers(1, 10**6), st.integers(30, 160), st.sampled_from(PRICINGS))
def test_at_every_request_the_session_so_far_costs_at_most_the_default_overdraft_more_than_without_the_plugin(
    seed, size, pricing
):
    report = replay(generate_session(size, seed=seed)["messages"], DEFAULT_DIRECTORY, DcpConfig(), pricing=pricing)
    overdraft = DcpConfig().cache.overdraft
    running = without = 0.0
    for cost in report.costs.per_request:
        running += cost.saved
        without += cost.cost_without
        assert running >= -overdraft * without - 1e-6


MASKING = {"strategies": {"maskOldOutputs": {"trigger": 2000, "keepTokens": 500, "keepTurns": 0}}}


@SETTINGS
@given(st.integers(1, 10**6), st.integers(30, 200), st.sampled_from(PRICINGS), st.sampled_from([0.0, 0.005, 0.01, 0.05]))
def test_at_every_request_the_session_so_far_costs_at_most_the_overdraft_more_than_without_the_plugin(
    seed, size, pricing, overdraft
):
    config = DcpConfig.model_validate({**MASKING, "cache": {"overdraft": overdraft}})
    report = replay(generate_session(size, seed=seed)["messages"], DEFAULT_DIRECTORY, config, pricing=pricing)
    saved = without = 0.0
    for cost in report.costs.per_request:
        saved += cost.saved
        without += cost.cost_without
        assert saved >= -overdraft * without - 1e-6


class _PlainRule(Scheduler):
    """The scheduler choosing by the plain rule: the auto tier asked first, one best over every affordable batch."""

    def _choose(
        self, previous: _Previous, pricing: Pricing, auto_tier: Callable[[], bool], free_from: int
    ) -> tuple[int | None, str]:
        auto = auto_tier()
        r, w = pricing.read, pricing.write
        waiting, sent = self._waiting, self._sent
        waiting_before_free = waiting.prefix(free_from)
        base = r * previous.saved + w * (waiting.total - waiting_before_free)
        horizon = max(1, self.run)
        already = previous.sent_with - sent.prefix(free_from) if free_from < previous.count else 0
        own = self.bank + base
        funds = own + self.overdraft * self.totals.cost_without
        best: tuple[float, int] | None = None
        for start in self._candidates(free_from):
            removed = waiting_before_free - waiting.prefix(start)
            extra = (w - r) * (previous.sent_with - sent.prefix(start) - already) - w * removed
            pays = extra <= horizon * r * removed
            if extra > (funds if pays else own) or not (pays or auto):
                continue
            gain = horizon * r * removed - extra
            if best is None or gain > best[0] or (gain == best[0] and start < best[1]):
                best = (gain, start)
        if best is None:
            return None, ""
        return best[1], "auto" if auto and best[0] < 0 else "pays"


# One request: messages added before it (their tokens), decisions pended (message, tokens), seconds since
# the previous one, whether the context reached the auto tier.
_requests = st.lists(
    st.tuples(
        st.lists(st.integers(0, 3_000), max_size=4),
        st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 2_500)), max_size=4),
        st.sampled_from([1, 30, 200, 400, 4_000]),
        st.booleans(),
    ),
    min_size=1,
    max_size=25,
)


Requests = list[tuple[list[int], list[tuple[int, int]], int, bool]]


def _scheduled(scheduler: Scheduler, requests: Requests) -> list[object]:
    """Each request's written decisions (message, seq) and cost, on a scheduler fed ``requests``."""
    out: list[object] = []
    seconds, seq = 0, 0
    for number, (added, pended, gap, auto) in enumerate(requests, 1):
        for tokens in added:
            scheduler.add_message(tokens)
        for at, tokens in pended if scheduler.messages else ():
            seq += 1
            index = at % scheduler.messages
            record = CallRecord(f"c{seq}", "read", seq, index, 0, None, None, 0, "completed")
            scheduler.pend(Decision(record, "deduplication", "output", "[pruned]", tokens))
        seconds += gap
        tier = (lambda: True) if auto else (lambda: False)
        point = Point(scheduler.messages, seconds * 1000, ("anthropic", "claude"), DEFAULTS["anthropic"], tier)
        written = scheduler.at(point, number)
        out.append(([(d.record.message_index, d.record.seq) for d in written], scheduler.take_costs()))
    return out


@settings(max_examples=300, deadline=None)
@given(_requests, st.sampled_from([0.0, 0.01, 0.05]))
def test_a_batch_chosen_asking_the_auto_tier_only_when_no_paying_batch_is_affordable_is_the_plain_rules(
    requests: Requests, overdraft: float
) -> None:
    plain = _PlainRule(overdraft=overdraft, log_costs=True)
    assert _scheduled(Scheduler(overdraft=overdraft, log_costs=True), requests) == _scheduled(plain, requests)
