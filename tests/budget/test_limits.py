"""Model context limits: exact name, then longest prefix, then family, then 128,000; host wins."""

from __future__ import annotations

import pytest

from dcp_plugin.budget import (
    MODEL_CONTEXT_LIMITS,
    context_limit,
    host_context_limit,
    lookup_context_limit,
    resolve_context_limit,
)
from dcp_plugin.budget.limits import normalize_model_id


def test_the_table_has_over_120_models() -> None:
    assert len(MODEL_CONTEXT_LIMITS) >= 120


@pytest.mark.parametrize(
    "prefix",
    ["gpt-", "o3", "claude-", "gemini-", "qwen", "deepseek-", "mistral-", "llama-", "glm-", "kimi-", "grok-"],
)
def test_the_table_covers_each_vendor(prefix: str) -> None:
    assert any(name.startswith(prefix) for name in MODEL_CONTEXT_LIMITS)


def test_exact_name_wins() -> None:
    assert lookup_context_limit("gpt-4") == (8_192, "exact")


def test_longest_prefix_wins_over_a_shorter_one() -> None:
    # "gpt-4" and "gpt-4o" both prefix this name; the longer decides
    assert lookup_context_limit("gpt-4o-2024-08-06") == (128_000, "prefix")
    assert lookup_context_limit("gpt-4-0613") == (8_192, "prefix")


def test_prefix_must_end_at_a_name_boundary() -> None:
    # "gpt-4" is not a prefix of "gpt-4.5-turbo": the family heuristic answers
    assert lookup_context_limit("gpt-4.5-turbo") == (128_000, "family")


def test_family_heuristic_when_neither_exact_nor_prefix_matches() -> None:
    assert lookup_context_limit("gemini-1.5-ultra") == (1_048_576, "family")
    assert lookup_context_limit("claude-next") == (200_000, "family")


def test_unknown_model_gets_128k() -> None:
    assert lookup_context_limit("some-new-model") == (128_000, "default")
    assert context_limit(None) == 128_000
    assert context_limit("") == 128_000


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("anthropic/claude-sonnet-4-5-20250929", 200_000),
        ("us.anthropic.claude-3-5-sonnet-20240620-v1:0", 200_000),
        ("claude-3-5-sonnet@20240620", 200_000),
        ("openrouter/moonshotai/Kimi-K2-Instruct", 131_072),
        ("meta-llama/Llama-3.3-70B-Instruct", 131_072),
        ("qwen3:32b", 131_072),
        ("GLM-4.6", 204_800),
        ("gpt-5-2025-08-07", 272_000),
    ],
)
def test_provider_paths_vendor_prefixes_and_tags_are_normalized(model_id: str, expected: int) -> None:
    assert context_limit(model_id) == expected


def test_normalize_keeps_the_bare_lowercase_name() -> None:
    assert normalize_model_id(" OpenAI/GPT-4o ") == "gpt-4o"


def test_host_limit_wins_over_the_table() -> None:
    assert resolve_context_limit("claude-sonnet-4", 64_000) == (64_000, "host")


def test_a_missing_or_invalid_host_limit_falls_back_to_the_table() -> None:
    assert resolve_context_limit("claude-sonnet-4", None) == (200_000, "exact")
    assert resolve_context_limit("claude-sonnet-4", 0) == (200_000, "exact")


def test_host_limit_is_read_from_opencode_model_shape() -> None:
    assert host_context_limit({"id": "m", "limit": {"context": 128_000, "output": 4096}}) == 128_000
    assert host_context_limit({"id": "m"}) is None
    assert host_context_limit({"limit": {"context": "big"}}) is None
    assert host_context_limit(None) is None
