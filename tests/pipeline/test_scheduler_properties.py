"""Invariants of the cache scheduler over generated sessions (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.config.model import DcpConfig
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
