"""Model context limits: a curated table, looked up by exact name, longest prefix, family, default."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Literal

DEFAULT_CONTEXT_LIMIT = 128_000

LimitSource = Literal["host", "exact", "prefix", "family", "default"]

# Maximum input tokens per model, as published by each vendor. Where a vendor states a
# separate input cap below the total window (GPT-5: 400K total, 272K input) the input
# cap is used. When sources disagree the smaller value is kept, so thresholds fire
# early rather than late.
MODEL_CONTEXT_LIMITS: dict[str, int] = {
    # OpenAI
    "gpt-5": 272_000,
    "gpt-5-mini": 272_000,
    "gpt-5-nano": 272_000,
    "gpt-5-pro": 272_000,
    "gpt-5-codex": 272_000,
    "gpt-5-chat-latest": 128_000,
    "gpt-5.1": 272_000,
    "gpt-5.1-codex": 272_000,
    "gpt-5.1-codex-mini": 272_000,
    "gpt-5.1-codex-max": 272_000,
    "gpt-5.1-chat-latest": 128_000,
    "gpt-5.2": 272_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4.5-preview": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "chatgpt-4o-latest": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-turbo-preview": 128_000,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o1-pro": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o3-pro": 200_000,
    "o3-mini": 200_000,
    "o3-deep-research": 200_000,
    "o4-mini": 200_000,
    "codex-mini-latest": 200_000,
    "gpt-oss-120b": 131_072,
    "gpt-oss-20b": 131_072,
    # Anthropic
    "claude-opus-4-5": 200_000,
    "claude-opus-4-1": 200_000,
    "claude-opus-4": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3-opus": 200_000,
    "claude-3-sonnet": 200_000,
    "claude-3-haiku": 200_000,
    "claude-2.1": 200_000,
    "claude-2.0": 100_000,
    "claude-instant-1.2": 100_000,
    # Google
    "gemini-3-pro-preview": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.5-flash-lite": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.0-flash-lite": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-1.5-flash-8b": 1_048_576,
    "gemini-1.0-pro": 32_760,
    "gemini-pro": 32_760,
    "gemma-3-27b-it": 131_072,
    "gemma-3-12b-it": 131_072,
    "gemma-3-4b-it": 131_072,
    "gemma-3-1b-it": 32_768,
    "gemma-3n-e4b-it": 32_768,
    "gemma-2-27b-it": 8_192,
    "gemma-2-9b-it": 8_192,
    # Qwen (Alibaba)
    "qwen3-max": 262_144,
    "qwen3-coder-plus": 1_048_576,
    "qwen3-coder-flash": 1_048_576,
    "qwen3-coder-480b-a35b-instruct": 262_144,
    "qwen3-coder-30b-a3b-instruct": 262_144,
    "qwen3-235b-a22b": 131_072,
    "qwen3-235b-a22b-instruct-2507": 262_144,
    "qwen3-235b-a22b-thinking-2507": 262_144,
    "qwen3-next-80b-a3b-instruct": 262_144,
    "qwen3-next-80b-a3b-thinking": 262_144,
    "qwen3-vl-235b-a22b-instruct": 262_144,
    "qwen3-30b-a3b": 131_072,
    "qwen3-32b": 131_072,
    "qwen3-14b": 131_072,
    "qwen3-8b": 131_072,
    "qwen3-4b": 32_768,
    "qwen-max": 32_768,
    "qwen-plus": 131_072,
    "qwen-turbo": 1_000_000,
    "qwen-long": 10_000_000,
    "qwen2.5-coder-32b-instruct": 131_072,
    "qwen2.5-72b-instruct": 131_072,
    "qwq-32b": 131_072,
    # DeepSeek
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
    "deepseek-v3": 128_000,
    "deepseek-v3.1": 128_000,
    "deepseek-v3.1-terminus": 128_000,
    "deepseek-v3.2-exp": 128_000,
    "deepseek-r1": 128_000,
    "deepseek-r1-0528": 128_000,
    "deepseek-coder-v2": 128_000,
    "deepseek-r1-distill-llama-70b": 131_072,
    "deepseek-r1-distill-qwen-32b": 131_072,
    # Mistral
    "mistral-large-latest": 131_072,
    "mistral-large-2411": 131_072,
    "mistral-medium-latest": 131_072,
    "mistral-medium-2508": 131_072,
    "mistral-medium-2505": 131_072,
    "mistral-small-latest": 131_072,
    "mistral-small-2506": 131_072,
    "mistral-small-2503": 131_072,
    "codestral-latest": 256_000,
    "codestral-2508": 256_000,
    "codestral-2501": 256_000,
    "devstral-medium-2507": 131_072,
    "devstral-small-2507": 131_072,
    "devstral-small-2505": 131_072,
    "magistral-medium-2509": 131_072,
    "magistral-small-2509": 131_072,
    "magistral-medium-2506": 40_000,
    "magistral-small-2506": 40_000,
    "ministral-8b-latest": 131_072,
    "ministral-3b-latest": 131_072,
    "pixtral-large-latest": 131_072,
    "pixtral-12b": 131_072,
    "open-mistral-nemo": 131_072,
    "mixtral-8x22b": 65_536,
    "mixtral-8x7b": 32_768,
    "mistral-7b": 32_768,
    # Meta Llama
    "llama-4-maverick": 1_048_576,
    "llama-4-scout": 10_000_000,
    "llama-3.3-70b": 131_072,
    "llama-3.2-90b-vision": 131_072,
    "llama-3.2-11b-vision": 131_072,
    "llama-3.2-3b": 131_072,
    "llama-3.2-1b": 131_072,
    "llama-3.1-405b": 131_072,
    "llama-3.1-70b": 131_072,
    "llama-3.1-8b": 131_072,
    "llama-3-70b": 8_192,
    "llama-3-8b": 8_192,
    # Zhipu GLM
    "glm-4.6": 204_800,
    "glm-4.5": 131_072,
    "glm-4.5-air": 131_072,
    "glm-4.5-flash": 131_072,
    "glm-4.5v": 65_536,
    "glm-4-plus": 128_000,
    "glm-4-long": 1_000_000,
    "glm-4-flash": 128_000,
    "glm-4-32b-0414-128k": 128_000,
    "glm-z1-32b-0414": 32_768,
    # Moonshot Kimi
    "kimi-k2-thinking": 262_144,
    "kimi-k2-turbo-preview": 262_144,
    "kimi-k2-0905-preview": 262_144,
    "kimi-k2-0711-preview": 131_072,
    "kimi-k2-instruct-0905": 262_144,
    "kimi-k2-instruct": 131_072,
    "kimi-latest": 131_072,
    "moonshot-v1-128k": 131_072,
    "moonshot-v1-32k": 32_768,
    "moonshot-v1-8k": 8_192,
    # xAI Grok
    "grok-4": 256_000,
    "grok-4-fast-reasoning": 2_000_000,
    "grok-4-fast-non-reasoning": 2_000_000,
    "grok-4-1-fast-reasoning": 2_000_000,
    "grok-4-1-fast-non-reasoning": 2_000_000,
    "grok-code-fast-1": 256_000,
    "grok-3": 131_072,
    "grok-3-mini": 131_072,
    "grok-2": 131_072,
    "grok-2-vision": 32_768,
    # Others seen behind OpenAI-compatible gateways
    "minimax-m2": 204_800,
    "minimax-m1": 1_000_000,
    "command-a-03-2025": 256_000,
    "command-r-plus": 128_000,
    "command-r": 128_000,
    "nova-pro-v1": 300_000,
    "nova-lite-v1": 300_000,
    "nova-micro-v1": 128_000,
    "phi-4": 16_384,
    "sonar-pro": 200_000,
    "sonar": 127_072,
}

# Checked in order after the table; the first pattern that matches the normalized
# name decides. Older or unknown members of a family get its most common window.
FAMILY_HEURISTICS: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern), limit)
    for pattern, limit in (
        (r"^claude", 200_000),
        (r"^gpt-5", 272_000),
        (r"^gpt-4\.1", 1_047_576),
        (r"^gpt-4", 128_000),
        (r"^gpt-3\.5", 16_385),
        (r"^o[134](?:$|-)", 200_000),
        (r"^gpt-oss", 131_072),
        (r"^gemini-1\.5", 1_048_576),
        (r"^gemini-1\.0", 32_760),
        (r"^gemini", 1_048_576),
        (r"^gemma-?3", 131_072),
        (r"^gemma", 8_192),
        (r"^qwen-?3-coder", 262_144),
        (r"^(?:qwen|qwq)", 131_072),
        (r"^deepseek", 128_000),
        (r"^mixtral", 32_768),
        (r"^(?:mistral|ministral|devstral|magistral|pixtral|codestral|open-mistral)", 131_072),
        (r"^llama-?4", 1_048_576),
        (r"^llama-?3\.[123]", 131_072),
        (r"^llama", 8_192),
        (r"^(?:glm|chatglm)", 131_072),
        (r"^(?:kimi|moonshot)", 131_072),
        (r"^grok-4", 256_000),
        (r"^grok", 131_072),
        (r"^minimax", 204_800),
        (r"^command", 128_000),
    )
)

# Cloud catalogues prefix vendor names with a dot (Bedrock: "us.anthropic.claude-…").
_VENDOR_DOT_PREFIX = re.compile(r"^(?:[a-z]{2,4}\.)?(?:anthropic|meta|mistral|amazon|cohere|ai21|deepseek|qwen|openai|moonshot|xai)\.")
_PREFIX_BOUNDARY = frozenset("-_:@")


def normalize_model_id(model_id: str) -> str:
    """Lower-case bare model name: provider path, vendor dot-prefix and '@' versions removed."""
    name = model_id.strip().lower()
    name = name.rsplit("/", 1)[-1]
    name = _VENDOR_DOT_PREFIX.sub("", name)
    return name.replace("@", "-")


def _longest_prefix(name: str) -> str | None:
    best: str | None = None
    for key in MODEL_CONTEXT_LIMITS:
        if len(name) > len(key) and name.startswith(key) and name[len(key)] in _PREFIX_BOUNDARY:
            if best is None or len(key) > len(best):
                best = key
    return best


@functools.lru_cache(maxsize=256)
def lookup_context_limit(model_id: str | None) -> tuple[int, LimitSource]:
    """The context limit of a model and how it was found: exact, prefix, family or default."""
    if not model_id or not isinstance(model_id, str):
        return DEFAULT_CONTEXT_LIMIT, "default"
    name = normalize_model_id(model_id)
    # Ollama-style tags ("qwen3:32b") name a size or quantization, not a window.
    candidates = [name]
    if ":" in name:
        candidates += [name.replace(":", "-"), name.split(":", 1)[0]]
    for candidate in candidates:
        if candidate in MODEL_CONTEXT_LIMITS:
            return MODEL_CONTEXT_LIMITS[candidate], "exact"
    for candidate in candidates:
        key = _longest_prefix(candidate)
        if key is not None:
            return MODEL_CONTEXT_LIMITS[key], "prefix"
    for candidate in candidates:
        for pattern, limit in FAMILY_HEURISTICS:
            if pattern.search(candidate):
                return limit, "family"
    return DEFAULT_CONTEXT_LIMIT, "default"


def context_limit(model_id: str | None) -> int:
    """Context limit in tokens of ``model_id``; 128,000 when nothing is known about it."""
    return lookup_context_limit(model_id)[0]


def host_context_limit(model: Any) -> int | None:
    """The limit a host passed as ``{"limit": {"context": int}}``, if it is a positive integer."""
    if not isinstance(model, Mapping):
        return None
    limit = model.get("limit")
    value = limit.get("context") if isinstance(limit, Mapping) else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def resolve_context_limit(model_id: str | None, host_limit: int | None) -> tuple[int, LimitSource]:
    """The host's own limit when it gave one, else the table lookup."""
    if isinstance(host_limit, int) and not isinstance(host_limit, bool) and host_limit > 0:
        return host_limit, "host"
    return lookup_context_limit(model_id)
