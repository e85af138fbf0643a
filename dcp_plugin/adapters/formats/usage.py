"""The provider's usage of a response, as the view's ``info.tokens``: OpenAI Chat and Responses, Anthropic, LangChain.

Hosts of the provider formats hand the usage of the response to their previous request (the
response itself, or its ``usage``; LangChain's messages carry ``usage_metadata``): the context
figure then rests on the provider's count, as it does in OpenCode, instead of an estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _get(source: Any, key: str) -> Any:
    """``source[key]`` for a mapping, ``source.key`` for an SDK object; None when absent."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def _count(source: Any, *keys: str) -> int:
    """The first of ``keys`` that holds a non-negative integer count, else 0."""
    for key in keys:
        value = _get(source, key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0


def usage_tokens(usage: Any) -> dict[str, Any] | None:
    """OpenCode's ``tokens`` for a provider's usage (or a whole response holding one); None when it holds none.

    - OpenAI Chat: ``prompt_tokens`` (cached ones included), ``prompt_tokens_details.cached_tokens``,
      ``completion_tokens``, ``completion_tokens_details.reasoning_tokens``;
    - OpenAI Responses and LangChain ``usage_metadata``: ``input_tokens`` (cached included),
      ``input_tokens_details.cached_tokens`` / ``input_token_details.cache_read`` and ``cache_creation``,
      ``output_tokens``, ``output_tokens_details.reasoning_tokens`` / ``output_token_details.reasoning``;
    - Anthropic: ``input_tokens`` (uncached only), ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
      ``output_tokens``.
    """
    inner = _get(usage, "usage")
    if inner is not None and _get(usage, "prompt_tokens") is None and _get(usage, "input_tokens") is None:
        usage = inner
    if usage is None:
        return None
    output = _count(usage, "completion_tokens", "output_tokens")
    if _get(usage, "prompt_tokens") is not None:  # OpenAI Chat
        prompt = _count(usage, "prompt_tokens")
        read = _count(_get(usage, "prompt_tokens_details"), "cached_tokens")
        reasoning = _count(_get(usage, "completion_tokens_details"), "reasoning_tokens")
        write = 0
        uncached = prompt - read
    elif _get(usage, "cache_read_input_tokens") is not None or _get(usage, "cache_creation_input_tokens") is not None:
        read = _count(usage, "cache_read_input_tokens")  # Anthropic: input_tokens leaves the cache out
        write = _count(usage, "cache_creation_input_tokens")
        uncached = _count(usage, "input_tokens")
        reasoning = 0
    else:  # OpenAI Responses, LangChain usage_metadata: input_tokens holds the cached ones too
        prompt = _count(usage, "input_tokens")
        details = _get(usage, "input_tokens_details") or _get(usage, "input_token_details")
        read = _count(details, "cached_tokens", "cache_read")
        write = _count(details, "cache_creation")
        out_details = _get(usage, "output_tokens_details") or _get(usage, "output_token_details")
        reasoning = _count(out_details, "reasoning_tokens", "reasoning")
        uncached = prompt - read - write
    if uncached + read + write <= 0:
        return None
    # OpenCode counts reasoning apart from the output; the providers include it in the output.
    return {
        "input": max(0, uncached),
        "output": max(0, output - reasoning),
        "reasoning": reasoning,
        "cache": {"read": read, "write": write},
    }
