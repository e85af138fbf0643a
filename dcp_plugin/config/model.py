"""The typed view of dcp.jsonc: a pydantic model whose defaults agree with the schema."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Tools whose calls no automatic strategy may prune; config can add, never remove.
HARDCODED_PROTECTED_TOOLS: frozenset[str] = frozenset(
    {
        "task",
        "todowrite",
        "todoread",
        "discard",
        "extract",
        "batch",
        "write",
        "edit",
        "plan_enter",
        "plan_exit",
    }
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class DeduplicationConfig(_Section):
    enabled: bool = True
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")


class SupersedeWritesConfig(_Section):
    enabled: bool = False


class PurgeErrorsConfig(_Section):
    enabled: bool = True
    turns: int = Field(default=4, ge=1)
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")


class StrategiesConfig(_Section):
    deduplication: DeduplicationConfig = DeduplicationConfig()
    supersede_writes: SupersedeWritesConfig = Field(
        default=SupersedeWritesConfig(), alias="supersedeWrites"
    )
    purge_errors: PurgeErrorsConfig = Field(default=PurgeErrorsConfig(), alias="purgeErrors")


class TurnProtectionConfig(_Section):
    enabled: bool = False
    turns: int = Field(default=4, ge=1)


class CommandsConfig(_Section):
    enabled: bool = True
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")


class CompactionConfig(_Section):
    enabled: bool = True


class ContextBudgetConfig(_Section):
    image_token_estimate: int = Field(default=1600, ge=0, alias="imageTokenEstimate")
    compaction: CompactionConfig = CompactionConfig()


class DcpConfig(_Section):
    """Effective configuration; immutable and hashable so a change is cheap to detect."""

    enabled: bool = True
    debug: bool = False
    prune_notification: Literal["off", "minimal", "detailed"] = Field(
        default="minimal", alias="pruneNotification"
    )
    commands: CommandsConfig = CommandsConfig()
    turn_protection: TurnProtectionConfig = Field(
        default=TurnProtectionConfig(), alias="turnProtection"
    )
    protected_file_patterns: tuple[str, ...] = Field(default=(), alias="protectedFilePatterns")
    strategies: StrategiesConfig = StrategiesConfig()
    context_budget: ContextBudgetConfig = Field(
        default=ContextBudgetConfig(), alias="contextBudget"
    )

    def dedup_protected(self) -> frozenset[str]:
        """Tools deduplication never prunes: the hardcoded list plus config additions."""
        return HARDCODED_PROTECTED_TOOLS | frozenset(self.strategies.deduplication.protected_tools)

    def purge_protected(self) -> frozenset[str]:
        """Tools purge-errors never prunes: the hardcoded list plus config additions."""
        return HARDCODED_PROTECTED_TOOLS | frozenset(self.strategies.purge_errors.protected_tools)

    def sweep_protected(self) -> frozenset[str]:
        """Tools `/dcp sweep` never prunes: the hardcoded list plus config additions."""
        return HARDCODED_PROTECTED_TOOLS | frozenset(self.commands.protected_tools)
