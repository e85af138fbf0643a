"""Prompt-cache prices per provider family and per model where the provider publishes them, and how a model's family is known.

The numbers are data (config can override every one of them): a cache read, and a token
processed without the cache (on Anthropic, and OpenAI from GPT-5.6 on, also written to it, at a
premium), each as a multiple of the provider's base input price, and how long an unused cached
prefix lives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from mypy_extensions import mypyc_attr

from dcp_plugin.model.refs import ModelRef

Family = Literal["anthropic", "openai", "google", "none"]
FAMILIES: tuple[Family, ...] = ("anthropic", "openai", "google", "none")


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class Pricing:
    """Prices of one cache family, relative to the base input price (1.0)."""

    family: str
    read: float  # a token read from the cached prefix
    write: float  # a token processed again (and, on Anthropic, written to the cache)
    ttl_seconds: float  # an unused cached prefix is gone after this long

    @property
    def caches(self) -> bool:
        """Whether a cached prefix is cheaper than processing it again (False: pruning is free)."""
        return self.read < self.write and self.ttl_seconds > 0


# Provider list prices as of 2026 (cache read / cache write or uncached, relative to base input):
# Anthropic 0.1 / 1.25 with the 5-minute cache (2.0 with the 1-hour one); OpenAI's automatic
# caching 0.1 (0.25-0.5 on older models) with no write premium, an unused prefix living
# "5-10 minutes"; Google's implicit caching 0.25 with no write premium. For OpenAI the longer
# lifetime is assumed: believing a cache cold that is still warm costs a rewrite, the other
# mistake only delays a free prune.
DEFAULTS: dict[str, Pricing] = {
    "anthropic": Pricing("anthropic", 0.1, 1.25, 300.0),
    "openai": Pricing("openai", 0.1, 1.0, 600.0),
    "google": Pricing("google", 0.25, 1.0, 300.0),
    "none": Pricing("none", 1.0, 1.0, 0.0),
}
ANTHROPIC_1H = Pricing("anthropic", 0.1, 2.0, 3600.0)
# OpenAI's GPT-5.6 family and later (its GPT-5.6 announcement, and the prompt-caching guide at
# developers.openai.com/api/docs/guides/prompt-caching): writing the cache costs 1.25x the uncached
# input price, a read 0.1x, and a cached prefix lives at least 30 minutes. Earlier OpenAI models
# have no write premium (the family default above).
OPENAI_GPT_5_6 = Pricing("openai", 0.1, 1.25, 1800.0)
_FIRST_PRICED_GPT = (5, 6)
# `gpt-5.6`, `gpt-5.6-mini`, `openai/gpt-5.10-codex`, `gpt-6`: the version after `gpt-`.
_GPT_VERSION = re.compile(r"(?:^|[/:])gpt-(\d+)(?:\.(\d+))?(?![\d.])")

_ANTHROPIC_PROVIDERS = frozenset({"anthropic", "claude"})
_OPENAI_PROVIDERS = frozenset({"openai", "azure", "azure-openai", "github-copilot", "deepseek", "xai", "groq"})
_GOOGLE_PROVIDERS = frozenset({"google", "google-vertex", "vertex", "gemini"})
_OPENAI_MODELS = ("gpt-", "gpt4", "o1", "o3", "o4", "codex", "chatgpt", "deepseek", "grok", "kimi", "qwen3-coder")


def family_of(model: ModelRef | None) -> Family:
    """The cache family of a model: from its provider, else its name; Anthropic when unknown.

    Claude models are Anthropic-priced wherever they are served (Bedrock, Vertex, proxies).
    An unrecognized provider or model (a local server, a proxy) is assumed to cache like
    Anthropic, the costliest case for a careless prune: nearly every provider and inference
    server reuses a shared prefix today.
    """
    provider = (model.provider_id or "").lower() if model is not None else ""
    name = (model.model_id or "").lower() if model is not None else ""
    if "claude" in name or provider in _ANTHROPIC_PROVIDERS:
        return "anthropic"
    if "gemini" in name or provider in _GOOGLE_PROVIDERS:
        return "google"
    if provider in _OPENAI_PROVIDERS or name.startswith(_OPENAI_MODELS):
        return "openai"
    return "anthropic"


def published_pricing(model: ModelRef | None, family: str) -> Pricing | None:
    """The prices the provider publishes for this model where they differ from its family's; None otherwise."""
    if family != "openai" or model is None:
        return None
    found = _GPT_VERSION.search((model.model_id or "").lower())
    if found is None:
        return None
    version = (int(found.group(1)), int(found.group(2) or 0))
    return OPENAI_GPT_5_6 if version >= _FIRST_PRICED_GPT else None


def pricing_for(model: ModelRef | None, config: Any) -> Pricing:
    """The prices the scheduler assumes for a request to ``model`` under a ``cache`` config section.

    A model's published prices replace its family's defaults; a price set in the config to
    anything but the family default wins over both.
    """
    choice = str(getattr(config, "pricing", "auto"))
    if choice == "anthropic-1h":
        return ANTHROPIC_1H
    family: str = family_of(model) if choice == "auto" else choice
    if family == "none":
        return DEFAULTS["none"]
    default = DEFAULTS[family]
    section = getattr(config, family, None)
    configured = (
        default if section is None else Pricing(family, float(section.read), float(section.write), float(section.ttl_seconds))
    )
    published = published_pricing(model, family)
    if published is None:
        return configured
    # The shipped global dcp.jsonc spells out the family defaults: equal to them is not a choice.
    return Pricing(
        family,
        published.read if configured.read == default.read else configured.read,
        published.write if configured.write == default.write else configured.write,
        published.ttl_seconds if configured.ttl_seconds == default.ttl_seconds else configured.ttl_seconds,
    )
