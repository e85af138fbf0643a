"""Pruning by the model itself: the discard, extract and restore tools, their judgments, the prunable list and the loop guard."""

from __future__ import annotations

from dcp_plugin.pipeline.modeltools.definitions import DISCARD, EXTRACT, NAMES, RESTORE, definitions, system_text
from dcp_plugin.pipeline.modeltools.judge import Call, Scope, Verdict, judge
from dcp_plugin.pipeline.modeltools.state import ListPoint, ModelTools, PrunableList, Tally
from dcp_plugin.pipeline.modeltools.texts import REFUSED

__all__ = [
    "DISCARD",
    "EXTRACT",
    "NAMES",
    "REFUSED",
    "RESTORE",
    "Call",
    "ListPoint",
    "ModelTools",
    "PrunableList",
    "Scope",
    "Tally",
    "Verdict",
    "definitions",
    "judge",
    "system_text",
]
