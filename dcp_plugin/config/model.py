"""The typed view of dcp.jsonc: a pydantic model whose defaults agree with the schema."""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import Field, create_model, model_validator

from dcp_plugin.config.profiles import DEFAULT_PROFILE, Profile, with_profile
from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.config.section import Section
from dcp_plugin.config.strategies import SECTIONS


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


class _StrategiesBase(Section):
    def section(self, name: str) -> Any:
        """The config section of the strategy registered as ``name``."""
        return getattr(self, _snake(name))


# One field per registered strategy, named after it: a new strategy brings its own section.
StrategiesConfig = cast(
    "type[_StrategiesBase]",
    create_model(  # type: ignore[call-overload]
        "StrategiesConfig",
        __base__=_StrategiesBase,
        **{_snake(name): (section, Field(default=section(), alias=name)) for name, section in SECTIONS},
    ),
)


class TurnProtectionConfig(Section):
    enabled: bool = False
    turns: int = Field(default=4, ge=1)


class CommandsConfig(Section):
    enabled: bool = True
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")


class ToolConfig(Section):
    enabled: bool = True


class ToolsConfig(Section):
    """The tools the model prunes with (discard, extract, restore), the prunable list and the loop guard."""

    discard: ToolConfig = ToolConfig()
    extract: ToolConfig = ToolConfig()
    restore: ToolConfig = ToolConfig()
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")
    nudge_frequency: int = Field(default=20, ge=1, le=1000, alias="nudgeFrequency")
    cooldown_steps: int = Field(default=3, ge=0, le=1000, alias="cooldownSteps")
    min_tokens: int = Field(default=250, ge=0, le=1_000_000, alias="minTokens")
    max_failures: int = Field(default=3, ge=1, le=1000, alias="maxFailures")

    def enabled(self, name: str) -> bool:
        """Whether the tool called ``name`` is on."""
        section = getattr(self, name, None)
        return isinstance(section, ToolConfig) and section.enabled


class CompactionConfig(Section):
    enabled: bool = True


class ContextBudgetConfig(Section):
    notify: bool = True
    image_token_estimate: int = Field(default=1600, ge=0, alias="imageTokenEstimate")
    compaction: CompactionConfig = CompactionConfig()


class AnthropicPrices(Section):
    read: float = Field(default=0.1, ge=0, le=10)
    write: float = Field(default=1.25, ge=0, le=10)
    ttl_seconds: int = Field(default=300, ge=0, le=86400, alias="ttlSeconds")


class OpenAIPrices(Section):
    read: float = Field(default=0.1, ge=0, le=10)
    write: float = Field(default=1.0, ge=0, le=10)
    ttl_seconds: int = Field(default=600, ge=0, le=86400, alias="ttlSeconds")


class GooglePrices(Section):
    read: float = Field(default=0.25, ge=0, le=10)
    write: float = Field(default=1.0, ge=0, le=10)
    ttl_seconds: int = Field(default=300, ge=0, le=86400, alias="ttlSeconds")


class CacheConfig(Section):
    scheduler: bool = True
    overdraft: float = Field(default=0.005, ge=0, le=0.05)
    pricing: Literal["auto", "anthropic", "anthropic-1h", "openai", "google", "none"] = "auto"
    anthropic: AnthropicPrices = AnthropicPrices()
    openai: OpenAIPrices = OpenAIPrices()
    google: GooglePrices = GooglePrices()


class DcpConfig(Section):
    """Effective configuration; immutable and hashable so a change is cheap to detect."""

    enabled: bool = True
    profile: Profile = DEFAULT_PROFILE
    debug: bool = False
    prune_notification: Literal["off", "minimal", "detailed"] = Field(default="minimal", alias="pruneNotification")
    commands: CommandsConfig = CommandsConfig()
    turn_protection: TurnProtectionConfig = Field(default=TurnProtectionConfig(), alias="turnProtection")
    protected_file_patterns: tuple[str, ...] = Field(default=(), alias="protectedFilePatterns")
    strategies: StrategiesConfig = StrategiesConfig()  # type: ignore[valid-type]
    cache: CacheConfig = CacheConfig()
    tools: ToolsConfig = ToolsConfig()
    context_budget: ContextBudgetConfig = Field(default=ContextBudgetConfig(), alias="contextBudget")
    checkpoints: bool = True

    @model_validator(mode="before")
    @classmethod
    def _profile(cls, data: Any) -> Any:
        """The profile's values under what the files set (see :mod:`dcp_plugin.config.profiles`)."""
        return with_profile(data) if isinstance(data, dict) else data

    def strategy_section(self, name: str) -> Any:
        """The config section of the strategy registered as ``name``."""
        strategies: _StrategiesBase = self.strategies
        return strategies.section(name)

    def sweep_protected(self) -> frozenset[str]:
        """Tools `/dcp sweep` never prunes: the hardcoded list plus config additions."""
        return HARDCODED_PROTECTED_TOOLS | frozenset(self.commands.protected_tools)


__all__ = ["HARDCODED_PROTECTED_TOOLS", "DcpConfig", "StrategiesConfig"]
