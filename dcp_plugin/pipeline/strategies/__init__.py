"""The automatic pruning strategies and their registry: the order they run in is the order listed here.

Adding a strategy: add its name and config section to :mod:`dcp_plugin.config.strategies`
(where the order is set), write its module (a class following
:class:`~dcp_plugin.pipeline.strategies.base.Strategy` and a ``SPEC``), list the ``SPEC`` in
``SPECS``, describe its section in ``schema/dcp.schema.json`` and add its row to the README
table. Nothing else names strategies. A strategy that ignores most calls says which it looks at
(``looks_at(tool, status)``), and one that measures the context says ``points_only``: the
session's roster (:mod:`.roster`) then asks it only about those.

Order matters only where two strategies claim the same field of the same call because of the
same newer call: the first listed keeps it. Otherwise the claim that came first in the
conversation keeps it (a cut gives way to a whole replacement). ``maskOldOutputs`` is last: it
masks only what no rule proved obsolete.
"""

from __future__ import annotations

from dcp_plugin.config.strategies import SECTIONS
from dcp_plugin.pipeline.strategies import (
    deduplication,
    mask_old_outputs,
    purge_errors,
    stale_diagnostics,
    supersede_writes,
    superseded_reads,
    superseded_todos,
)
from dcp_plugin.pipeline.strategies.base import FinishedCall, Progress, Proposal, Strategy, StrategySpec, acts_with_time

SPECS: dict[str, StrategySpec] = {
    spec.name: spec
    for spec in (
        deduplication.SPEC,
        supersede_writes.SPEC,
        purge_errors.SPEC,
        stale_diagnostics.SPEC,
        superseded_reads.SPEC,
        superseded_todos.SPEC,
        mask_old_outputs.SPEC,
    )
}
# In the order the config lists the sections; a section without a strategy fails here, at import.
REGISTRY: tuple[StrategySpec, ...] = tuple(SPECS[name] for name, _ in SECTIONS)
STRATEGY_ORDER: tuple[str, ...] = tuple(spec.name for spec in REGISTRY)

# Decisions that come from the user or the model rather than from a strategy.
SWEEP = "sweep"
DISCARD = "discard"  # the model's tools, named after the decisions they make
EXTRACT = "extract"
MODEL_REASONS: dict[str, str] = {DISCARD: "discarded by the model", EXTRACT: "extracted by the model"}
ALL_REASONS: tuple[str, ...] = (*STRATEGY_ORDER, SWEEP, *MODEL_REASONS)
REASON_TEXT: dict[str, str] = {spec.name: spec.reason for spec in REGISTRY} | {SWEEP: "swept by /dcp sweep"} | MODEL_REASONS

DEDUPLICATION = deduplication.NAME
SUPERSEDE_WRITES = supersede_writes.NAME
PURGE_ERRORS = purge_errors.NAME

__all__ = [
    "ALL_REASONS",
    "DEDUPLICATION",
    "DISCARD",
    "EXTRACT",
    "MODEL_REASONS",
    "PURGE_ERRORS",
    "REASON_TEXT",
    "REGISTRY",
    "SPECS",
    "STRATEGY_ORDER",
    "SUPERSEDE_WRITES",
    "SWEEP",
    "FinishedCall",
    "Progress",
    "Proposal",
    "Strategy",
    "StrategySpec",
    "acts_with_time",
]
