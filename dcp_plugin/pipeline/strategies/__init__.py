"""The automatic pruning strategies, each an incremental index over finished tool calls."""

from dcp_plugin.pipeline.strategies.deduplication import Deduplication
from dcp_plugin.pipeline.strategies.purge_errors import PurgeErrors
from dcp_plugin.pipeline.strategies.supersede_writes import SupersedeWrites

DEDUPLICATION = "deduplication"
SUPERSEDE_WRITES = "supersedeWrites"
PURGE_ERRORS = "purgeErrors"
SWEEP = "sweep"
STRATEGY_ORDER: tuple[str, ...] = (DEDUPLICATION, SUPERSEDE_WRITES, PURGE_ERRORS)

__all__ = [
    "Deduplication",
    "PurgeErrors",
    "SupersedeWrites",
    "DEDUPLICATION",
    "SUPERSEDE_WRITES",
    "PURGE_ERRORS",
    "SWEEP",
    "STRATEGY_ORDER",
]
