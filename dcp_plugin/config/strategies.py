"""The `strategies` object of dcp.jsonc: one typed section per automatic strategy, in the order they run.

The pipeline's strategy registry is built in this order from these names, each strategy with
its section; adding a strategy adds its section and name here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from dcp_plugin.config.section import Section

DEDUPLICATION = "deduplication"
SUPERSEDE_WRITES = "supersedeWrites"
PURGE_ERRORS = "purgeErrors"
STALE_DIAGNOSTICS = "staleDiagnostics"
SUPERSEDED_READS = "supersededReads"
SUPERSEDED_TODOS = "supersededTodos"
MASK_OLD_OUTPUTS = "maskOldOutputs"

# OpenCode's bash takes a `description` the model writes for the user ("Run the tests"): two
# runs of one command that differ only there are the same call.
DEFAULT_IGNORE_FIELDS: dict[str, tuple[str, ...]] = {"bash": ("description",)}

# How maskOldOutputs acts once the context reached its trigger: "window" masks everything but the
# kept outputs at every request from then on; "batch" masks down to the kept outputs at each
# request whose context reached the trigger, then lets the context grow back to it.
MaskMode = Literal["window", "batch"]

# What keepTokens holds: "files" outputs that show a file's contents (what an edit copies from),
# so older command output, searches and listings go first; "all" every maskable output.
KeepTokensOf = Literal["files", "all"]

# What keepTurns holds: "all" every output of the last user turns; "files" only those that show a
# file's contents (command output and searches of those turns may go).
KeepTurnsOf = Literal["all", "files"]

# The budget tiers (see budget.thresholds.Tier) a trigger may name.
TriggerTier = Literal["warn", "auto", "hard"]
Trigger = TriggerTier | Annotated[int, Field(ge=1000)] | Annotated[float, Field(gt=0, le=1)]


class DeduplicationConfig(Section):
    enabled: bool = True
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")
    ignore_fields: dict[str, tuple[str, ...]] = Field(default=DEFAULT_IGNORE_FIELDS, alias="ignoreFields")


class SupersedeWritesConfig(Section):
    enabled: bool = False


class PurgeErrorsConfig(Section):
    enabled: bool = True
    turns: int = Field(default=4, ge=1)
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")


class StaleDiagnosticsConfig(Section):
    enabled: bool = True


class SupersededReadsConfig(Section):
    enabled: bool = True


class SupersededTodosConfig(Section):
    enabled: bool = True


class MaskOldOutputsConfig(Section):
    enabled: bool = True
    trigger: Trigger = 30_000
    mode: MaskMode = "batch"
    keep_tokens: int = Field(default=0, ge=0, alias="keepTokens")
    keep_tokens_of: KeepTokensOf = Field(default="files", alias="keepTokensOf")
    keep_turns: int = Field(default=3, ge=0, alias="keepTurns")
    keep_turns_of: KeepTurnsOf = Field(default="files", alias="keepTurnsOf")
    turns_end_at_checks: bool = Field(default=True, alias="turnsEndAtChecks")
    keep_calls: int = Field(default=3, ge=0, alias="keepCalls")
    keep_file_tokens: int = Field(default=0, ge=0, alias="keepFileTokens")
    edited_when_cold: bool = Field(default=True, alias="editedWhenCold")
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")


# The order the strategies run in: where two claim the same field of the same call because of
# the same newer call, the first listed keeps it (see the registry in pipeline/strategies).
SECTIONS: tuple[tuple[str, type[Section]], ...] = (
    (DEDUPLICATION, DeduplicationConfig),
    (SUPERSEDE_WRITES, SupersedeWritesConfig),
    (PURGE_ERRORS, PurgeErrorsConfig),
    (STALE_DIAGNOSTICS, StaleDiagnosticsConfig),
    (SUPERSEDED_READS, SupersededReadsConfig),
    (SUPERSEDED_TODOS, SupersededTodosConfig),
    (MASK_OLD_OUTPUTS, MaskOldOutputsConfig),
)
