"""The one size shown for a tool output wherever it is named: the tokens it takes in a request.

The prunable list, discard's and extract's answers, the prune toast and `/dcp pin` all show this
figure for one output; what pruning saves (the output less its placeholder) is a total apart.
"""

from __future__ import annotations

from dcp_plugin.model.messages import ToolState
from dcp_plugin.model.tokens import estimate_output_tokens, output_tokens, tokens_removed
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.placeholders import DISCARDED_PLACEHOLDERS, tag


def output_size(state: ToolState) -> int:
    """The size shown for an output that is not pruned: the tokens it takes as the host sends it."""
    return output_tokens(state)


def pruned_size(decision: Decision) -> int:
    """The size shown for what a decision prunes: the whole output it replaced, or what a cut took.

    A placeholder for the whole output saved the output less the placeholder, so adding the
    placeholder back gives exactly :func:`output_size` of the output it replaced.
    """
    if decision.field == "output" and decision.cuts is None and isinstance(decision.value, str):
        return decision.tokens_saved + estimate_output_tokens(decision.value)
    return decision.tokens_saved


def freed_by_discard(state: ToolState, ident: str | None) -> int:
    """Tokens a discard of this output frees: what ranks it in the prunable list."""
    return tokens_removed(state, "output", tag(DISCARDED_PLACEHOLDERS["done"], ident))
