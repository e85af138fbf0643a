"""Whether a decision made on an older tool state may still be written over the state the host sends now.

A decision's value is computed once, from the field as it was then. The host may clear, null,
shrink or replace that field later (OpenCode's compaction clears old outputs); writing the value
then would bring back content the host no longer holds, or make the part bigger. Such a decision
is skipped, and the field goes out as the host sent it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.messages import Message, locate, output_is_cleared
from dcp_plugin.model.tokens import json_chars
from dcp_plugin.pipeline.decisions import Decision, apply_cuts
from dcp_plugin.pipeline.placeholders import PLACEHOLDER_PREFIX

# As deep as `shrink_strings` goes: below that it leaves values as they are.
_MAX_DEPTH = 200


def still_fits(decision: Decision, state: Mapping[str, object]) -> bool:
    """Whether ``decision.value`` is what the decision's edit makes of the field as the host sends it now."""
    field = decision.field
    current = state.get(field)
    cuts = decision.cuts
    if cuts is None and field == "output":
        # A whole placeholder (most decisions: checked inline, it runs for each on every request):
        # only over a completed, uncleared output it still makes smaller.
        value = decision.value
        if type(current) is str:
            if len(current) <= len(value) or current.startswith(PLACEHOLDER_PREFIX):
                return False
        elif current is None or json_chars(current) <= json_chars(value):
            return False
        when = state.get("time")
        return state.get("status") == "completed" and not (type(when) is dict and when.get("compacted"))
    if cuts is not None:
        # Cuts (and the list appended to an output) were made for one exact original string.
        return (
            type(current) is str
            and len(current) == decision.expect_length
            and not output_is_cleared(state)
            and apply_cuts(current, cuts) == decision.value
        )
    return shrunk_from(decision.value, current)


def shrunk_from(value: Any, current: Any, depth: int = 0) -> bool:
    """Whether ``value`` is ``current`` with some strings replaced by shorter placeholders (inputs)."""
    # Loops, not all() over generators: this runs for each shrunk input on every request.
    kind = type(value)
    if kind is str:
        if value is current:
            return True
        if value != current and value.startswith(PLACEHOLDER_PREFIX):
            return type(current) is str and len(current) > len(value)
        return bool(value == current)
    if depth > _MAX_DEPTH:
        return bool(value == current)
    if kind is dict:
        if type(current) is not dict or value.keys() != current.keys():
            return False
        for key, item in value.items():
            if not shrunk_from(item, current[key], depth + 1):
                return False
        return True
    if kind is list:
        if type(current) is not list or len(value) != len(current):
            return False
        for item, now in zip(value, current, strict=True):
            if not shrunk_from(item, now, depth + 1):
                return False
        return True
    return bool(value == current)


def kept_went_stale(kept: Sequence[Decision], messages: Sequence[Message], continuity: Continuity) -> bool:
    """Whether a decision a client keeps no longer fits a message the verdict says the host resent.

    A client that keeps patches (the bridge's JS side) re-applies them on every request; one made
    stale by the host must be withdrawn, which only a whole new set does.
    """
    changed_from = continuity.resent_from
    if changed_from is None:
        return False
    for decision in kept:
        record = decision.record
        if record.message_index < changed_from or decision.superseded or decision.withdraws is not None:
            continue
        state = locate(messages, record)
        if state is None or not still_fits(decision, state):
            return True
    return False
