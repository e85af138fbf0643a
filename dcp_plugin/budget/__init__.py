"""Context budget: thresholds, severity, model limits, snapshots, compaction and calibration."""

from dcp_plugin.budget.calibration import (
    Calibration,
    Calibrator,
    Prediction,
    predict_prompt_tokens,
)
from dcp_plugin.budget.compaction import (
    MAX_CONSECUTIVE_FAILURES,
    CompactionController,
    CompactionOutcome,
    CompactionStatus,
)
from dcp_plugin.budget.limits import (
    DEFAULT_CONTEXT_LIMIT,
    MODEL_CONTEXT_LIMITS,
    context_limit,
    host_context_limit,
    lookup_context_limit,
    resolve_context_limit,
)
from dcp_plugin.budget.render import ladder_lines
from dcp_plugin.budget.severity import Severity, severity, usage_ratio
from dcp_plugin.budget.snapshot import BudgetTracker, ContextSnapshot, EstimateBasis, build_snapshot
from dcp_plugin.budget.thresholds import (
    COMPACT_MAX_OUTPUT_TOKENS,
    Thresholds,
    Tier,
    compute_thresholds,
    tier,
)
from dcp_plugin.budget.tips import TipId, context_tip, tip_text

__all__ = [
    "COMPACT_MAX_OUTPUT_TOKENS",
    "DEFAULT_CONTEXT_LIMIT",
    "MAX_CONSECUTIVE_FAILURES",
    "MODEL_CONTEXT_LIMITS",
    "BudgetTracker",
    "Calibration",
    "Calibrator",
    "CompactionController",
    "CompactionOutcome",
    "CompactionStatus",
    "ContextSnapshot",
    "EstimateBasis",
    "Prediction",
    "Severity",
    "Thresholds",
    "Tier",
    "TipId",
    "build_snapshot",
    "compute_thresholds",
    "context_limit",
    "context_tip",
    "host_context_limit",
    "ladder_lines",
    "lookup_context_limit",
    "predict_prompt_tokens",
    "resolve_context_limit",
    "severity",
    "tier",
    "tip_text",
    "usage_ratio",
]
