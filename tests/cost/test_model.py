"""The prompt-cache cost model: prices per family, recognizing the family, pricing one request."""

from __future__ import annotations

import pytest

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost import family_of, net_sentence, pricing_for, request_cost
from dcp_plugin.cost.prices import DEFAULTS, Pricing
from dcp_plugin.model.refs import ModelRef
from tests.support.paths import ROOT


def test_a_warm_anthropic_request_reads_the_prefix_at_a_tenth_and_writes_the_rest_at_one_and_a_quarter() -> None:
    # 10,000 cached tokens at 0.1 and 2,000 new ones written at 1.25.
    assert request_cost(12_000, 10_000, DEFAULTS["anthropic"]) == pytest.approx(1_000 + 2_500)


def test_a_warm_openai_request_has_no_write_premium() -> None:
    assert request_cost(12_000, 10_000, DEFAULTS["openai"]) == pytest.approx(1_000 + 2_000)


def test_a_warm_google_request_reads_at_a_quarter() -> None:
    assert request_cost(12_000, 10_000, DEFAULTS["google"]) == pytest.approx(2_500 + 2_000)


def test_without_a_cache_every_token_costs_the_base_price() -> None:
    assert request_cost(12_000, 10_000, DEFAULTS["none"]) == pytest.approx(12_000)
    assert not DEFAULTS["none"].caches


def test_a_cold_request_writes_everything() -> None:
    assert request_cost(12_000, 0, DEFAULTS["anthropic"]) == pytest.approx(15_000)


def test_a_cached_prefix_is_never_counted_beyond_the_prompt() -> None:
    assert request_cost(1_000, 5_000, DEFAULTS["openai"]) == pytest.approx(100)


def test_a_prune_deep_in_a_warm_anthropic_prefix_pays_after_the_number_of_requests_the_design_gives() -> None:
    # R = 10K removed, S = 100K from the changed part to the end: n* = (w(S-R) - rS) / (rR) ≈ 102.5.
    p = DEFAULTS["anthropic"]
    extra = p.write * (100_000 - 10_000) - p.read * 100_000
    assert extra / (p.read * 10_000) == pytest.approx(102.5)


@pytest.mark.parametrize(
    ("provider", "model", "family"),
    [
        ("anthropic", "claude-sonnet-4-5", "anthropic"),
        ("amazon-bedrock", "anthropic.claude-3-5-sonnet", "anthropic"),
        ("openrouter", "anthropic/claude-opus-4", "anthropic"),
        ("openai", "gpt-5", "openai"),
        (None, "o4-mini", "openai"),
        ("deepseek", "deepseek-chat", "openai"),
        ("google", "gemini-2.5-pro", "google"),
        ("google-vertex", "gemini-2.0-flash", "google"),
        ("ollama", "llama3.1:8b", "anthropic"),
        (None, None, "anthropic"),
    ],
)
def test_the_family_is_recognized_from_provider_and_model(provider: str | None, model: str | None, family: str) -> None:
    assert family_of(ModelRef(provider, model)) == family


def test_an_unknown_model_is_priced_like_anthropic_the_costliest_case() -> None:
    assert pricing_for(ModelRef("local", "my-model"), DcpConfig().cache) == DEFAULTS["anthropic"]


def test_config_overrides_a_familys_prices_and_lifetime() -> None:
    config = DcpConfig.model_validate({"cache": {"openai": {"read": 0.5, "ttlSeconds": 3600}}})
    assert pricing_for(ModelRef("openai", "gpt-4o"), config.cache) == Pricing("openai", 0.5, 1.0, 3600.0)


def test_a_fixed_pricing_wins_over_the_family_of_the_model() -> None:
    config = DcpConfig.model_validate({"cache": {"pricing": "google"}})
    assert pricing_for(ModelRef("anthropic", "claude-sonnet-4-5"), config.cache).family == "google"


def test_the_one_hour_anthropic_cache_writes_at_two_and_lives_an_hour() -> None:
    config = DcpConfig.model_validate({"cache": {"pricing": "anthropic-1h"}})
    assert pricing_for(None, config.cache) == Pricing("anthropic", 0.1, 2.0, 3600.0)


def test_pricing_none_means_pruning_is_free() -> None:
    config = DcpConfig.model_validate({"cache": {"pricing": "none"}})
    assert not pricing_for(ModelRef("anthropic", "claude-sonnet-4-5"), config.cache).caches


def test_the_net_cost_reads_as_cheaper_or_more_expensive() -> None:
    assert net_sentence(1000.0, 946.0) == "5.4% cheaper than without the plugin"
    assert net_sentence(1000.0, 1081.0) == (
        "8.1% more expensive than without the plugin: its placeholders changed parts the provider had cached, "
        "which it then processed again"
    )
    assert net_sentence(0.0, 0.0) is None


@pytest.mark.parametrize("model", ["gpt-5.6", "gpt-5.6-mini", "gpt-5.7-codex", "gpt-5.10", "gpt-6", "openai/gpt-5.6"])
def test_openai_from_gpt_5_6_on_pays_the_published_cache_write_premium(model: str) -> None:
    pricing = pricing_for(ModelRef("openai", model), DcpConfig().cache)
    assert (pricing.read, pricing.write, pricing.ttl_seconds) == (0.1, 1.25, 1800.0)


@pytest.mark.parametrize("model", ["gpt-5.5", "gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4o", "o3", "gpt-5.5-pro"])
def test_earlier_openai_models_have_no_write_premium(model: str) -> None:
    assert pricing_for(ModelRef("openai", model), DcpConfig().cache) == DEFAULTS["openai"]


def test_a_model_named_like_gpt_5_6_on_an_unknown_provider_keeps_the_unknown_default() -> None:
    # Anthropic-priced (the costliest case) only when the family is not known from the name.
    assert family_of(ModelRef("proxy", "gpt-5.6")) == "openai"
    assert pricing_for(ModelRef("proxy", "my-gpt-5.6-finetune"), DcpConfig().cache) == DEFAULTS["anthropic"]


def test_the_written_out_family_defaults_do_not_hide_the_models_prices() -> None:
    # The global dcp.jsonc created on first run spells out every default.
    config = DcpConfig.model_validate({"cache": {"openai": {"read": 0.1, "write": 1.0, "ttlSeconds": 600}}})
    assert pricing_for(ModelRef("openai", "gpt-5.6"), config.cache).write == 1.25


def test_a_price_set_in_the_config_wins_over_the_models_published_one() -> None:
    config = DcpConfig.model_validate({"cache": {"openai": {"write": 1.1}}})
    pricing = pricing_for(ModelRef("openai", "gpt-5.6"), config.cache)
    assert (pricing.write, pricing.ttl_seconds) == (1.1, 1800.0)


def test_a_gpt_5_6_rewrite_costs_the_premium() -> None:
    pricing = pricing_for(ModelRef("openai", "gpt-5.6"), DcpConfig().cache)
    assert request_cost(12_000, 10_000, pricing) == pytest.approx(1_000 + 2_500)


def test_readmes_prices_table_gives_the_gpt_5_6_prices_the_code_uses() -> None:

    from dcp_plugin.cost.prices import OPENAI_GPT_5_6

    readme = (ROOT / "README.md").read_text()
    [row] = [line for line in readme.splitlines() if line.startswith("| `openai`, GPT-5.6 and later")]
    p = OPENAI_GPT_5_6
    assert row.endswith(f"| {p.read} | {p.write} (written to the cache) | {p.ttl_seconds:,.0f} s |")
