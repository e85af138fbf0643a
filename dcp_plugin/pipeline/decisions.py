"""Decisions: one record per tool call, the edits a strategy proposes, and the decisions they become."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mypy_extensions import mypyc_attr

from dcp_plugin.model.messages import ToolState, output_is_cleared
from dcp_plugin.model.tokens import estimate_output_tokens, json_chars, tokens_removed, tool_state_tokens
from dcp_plugin.pipeline.placeholders import SWEPT_PLACEHOLDER, is_placeholder, tag

Field = Literal["input", "output"]
Cut = tuple[int, int, str]
# What a decision writes into its field: an output string, or a tool's whole input (any JSON object).
Value = str | dict[str, Any]


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class ReplaceOutput:
    """Replace a completed call's whole output by ``text``."""

    text: str


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class ShrinkInput:
    """Replace every input string longer than ``text`` by it, at every depth; top-level ``keep`` keys stay."""

    text: str
    keep: frozenset[str] = frozenset()


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class CutOutput:
    """Replace ranges ``[start, end)`` of the original output string by short texts."""

    cuts: tuple[Cut, ...]


Edit = ReplaceOutput | ShrinkInput | CutOutput


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True, eq=False)
class CallRecord:
    """What the strategies need to know about one tool call, and where it is; never its content.

    ``output_decision`` and ``input_decision`` are the decisions that currently own each
    field (None while nothing prunes it): the one place that says whether a call is pruned.
    ``list_decision`` appends the plugin's own text to the output (the prunable list), which is
    not a prune. ``ident`` is the short id the model names the call by (:mod:`.ids`);
    ``step`` counts the assistant messages up to and including the call's own.
    """

    call_id: str
    tool: str
    seq: int
    message_index: int
    part_index: int
    part_id: str | None
    message_id: str | None
    turn: int
    status: str
    ident: str | None = None
    step: int = 0
    output_decision: Decision | None = None
    input_decision: Decision | None = None
    list_decision: Decision | None = None

    @property
    def pruned(self) -> bool:
        """Whether some decision replaces a field of this call."""
        return self.output_decision is not None or self.input_decision is not None

    @property
    def output_kept(self) -> bool:
        """Whether a whole placeholder owns the output: it keeps it for the epoch, so no other replacement can claim it."""
        owner = self.output_decision
        return owner is not None and owner.cuts is None


def retag(edit: Edit, ident: str | None) -> Edit:
    """The edit with every placeholder it writes naming ``ident``."""
    if ident is None:
        return edit
    if isinstance(edit, ReplaceOutput):
        return ReplaceOutput(tag(edit.text, ident))
    if isinstance(edit, ShrinkInput):
        return ShrinkInput(tag(edit.text, ident), edit.keep)
    return CutOutput(tuple((start, end, tag(text, ident)) for start, end, text in edit.cuts))


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True, eq=False)
class Decision:
    """One strategy's verdict on one field of one call, and what is written there once applied.

    ``value`` is the field's whole new value (for a cut, the cut string); ``cuts`` and
    ``expect_length`` describe a cut against the original for clients that apply patches
    themselves (the bridge). ``applied_at`` is the session request index it was first written
    in, None while it waits; ``superseded`` is set when a later decision on the same field
    replaced it. ``replaces`` is the applied decision this one takes over from once it is
    applied itself (until then that one stays in force, so the field never falls back to its
    original while the new value waits for the scheduler).
    """

    record: CallRecord
    strategy: str
    field: Field
    value: Value
    tokens_saved: int
    cuts: tuple[Cut, ...] | None = None
    expect_length: int | None = None
    applied_at: int | None = None
    superseded: bool = False
    replaces: Decision | None = None
    is_list: bool = False  # the plugin's own text added to an output (the prunable list), not a prune
    withdraws: Decision | None = None  # the list this decision takes out again (the output as it was)

    @property
    def call_id(self) -> str:
        return self.record.call_id

    @property
    def tool(self) -> str:
        return self.record.tool


def shrink_strings(value: Any, placeholder: str, keep: frozenset[str] = frozenset(), depth: int = 0) -> Any:
    """``value`` with every string longer than ``placeholder``, at every depth, replaced by it.

    Shorter strings stay: a placeholder must never make a request bigger. Mapping keys in
    ``keep`` (path arguments) keep their values at the top level.
    """
    if isinstance(value, str):
        return placeholder if len(value) > len(placeholder) else value
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {
            k: v if (depth == 0 and k in keep) else shrink_strings(v, placeholder, frozenset(), depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [shrink_strings(v, placeholder, frozenset(), depth + 1) for v in value]
    return value


def apply_cuts(text: str, cuts: Sequence[Cut]) -> str:
    """``text`` with each ``[start, end)`` range replaced by its short text; ranges are sorted and disjoint."""
    pieces: list[str] = []
    position = 0
    for start, end, replacement in cuts:
        pieces.append(text[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def realize(edit: Edit, state: ToolState) -> tuple[Field, Value, tuple[Cut, ...] | None] | None:
    """(field, new value, cuts) of an edit on a call's state; None when it would not make the call smaller.

    A placeholder never makes a part bigger and never adds a field the state did not have:
    outputs that are missing, not strings and not larger than the placeholder as JSON, or
    already cleared by the host, are left alone.
    """
    if isinstance(edit, ReplaceOutput):
        return _replace_output(edit.text, state)
    if isinstance(edit, ShrinkInput):
        shrunk = _shrink_input(edit.text, edit.keep, state)
        return ("input", shrunk, None) if shrunk is not None else None
    output = state.get("output")
    if state.get("status") != "completed" or not isinstance(output, str) or output_is_cleared(state):
        return None
    # Each cut must shrink its own range (its text names the call now, so it is longer than the
    # strategy measured); the others still stand.
    cuts = tuple(sorted(cut for cut in edit.cuts if len(cut[2]) < cut[1] - cut[0]))
    if not cuts or any(not (0 <= s < e <= len(output)) for s, e, _ in cuts):
        return None
    if any(cuts[i][1] > cuts[i + 1][0] for i in range(len(cuts) - 1)):
        return None
    value = apply_cuts(output, cuts)
    return ("output", value, cuts) if len(value) < len(output) else None


def _shrink_input(text: str, keep: frozenset[str], state: ToolState) -> dict[str, Any] | None:
    """The input :func:`realize` makes of ``ShrinkInput(text, keep)``; None when it changes nothing."""
    tool_input = state.get("input")
    if not isinstance(tool_input, dict):
        return None
    shrunk: dict[str, Any] = shrink_strings(tool_input, text, keep)
    return shrunk if shrunk != tool_input else None


def _replaced_output(text: str, state: ToolState) -> Any:
    """The output ``ReplaceOutput(text)`` replaces in ``state``; None when it may not.

    Not a completed call's, cleared by the host already, no longer than ``text``, or a whole
    placeholder already: each refuses it.
    """
    if state.get("status") != "completed" or output_is_cleared(state):
        return None
    whole = state.get("output")  # a missing output reads as None: refused alike
    if whole is None or json_chars(whole) <= len(text) or is_placeholder(whole):
        return None
    return whole


def _replace_output(text: str, state: ToolState) -> tuple[Field, Value, None] | None:
    """What :func:`realize` makes of ``ReplaceOutput(text)``."""
    return None if _replaced_output(text, state) is None else ("output", text, None)


def _replacement_saves(text: str, state: ToolState) -> int:
    """Tokens ``ReplaceOutput(text)`` removes from ``state``: 0 when :func:`_replace_output` refuses it.

    One read of the state for both questions (most decisions of a first sight replace an output),
    without the copy of the state :func:`tokens_removed` makes. A ``time`` that is a mapping but no
    dict (which no host sends) is counted by that rule itself.
    """
    whole = _replaced_output(text, state)
    if whole is None:
        return 0
    when = state.get("time")
    if when is not None and type(when) is not dict:
        return tokens_removed(state, "output", text)
    # The output counts as it is (completed, not cleared); an empty replacement counts nothing.
    before = estimate_output_tokens(whole) if whole else 0
    return max(0, before - (estimate_output_tokens(text) if text else 0))


def decide(record: CallRecord, strategy: str, edit: Edit, state: ToolState) -> Decision | None:
    """The decision an edit makes on a call, with what it saves; None when it saves nothing.

    Its placeholders name the call's id (:func:`tag`).
    """
    if type(edit) is ReplaceOutput:
        # Most decisions replace an output: its text is tagged without building the retagged edit,
        # and the decision has no cuts to describe.
        ident = record.ident
        text = edit.text if ident is None else tag(edit.text, ident)
        removed = _replacement_saves(text, state)
        return Decision(record, strategy, "output", text, removed) if removed > 0 else None
    if type(edit) is ShrinkInput:
        # The next most common (failed calls' inputs): tagged without building the retagged edit.
        ident = record.ident
        shrunk = _shrink_input(edit.text if ident is None else tag(edit.text, ident), edit.keep, state)
        if shrunk is None:
            return None
        removed = tokens_removed(state, "input", shrunk)
        return Decision(record, strategy, "input", shrunk, removed) if removed > 0 else None
    realized = realize(retag(edit, record.ident), state)
    if realized is None:
        return None
    field, value, cuts = realized
    saved = tokens_removed(state, field, value)
    if saved <= 0:
        return None
    original = state.get(field)
    return Decision(
        record=record,
        strategy=strategy,
        field=field,
        value=value,
        tokens_saved=saved,
        cuts=cuts,
        expect_length=len(original) if cuts is not None and isinstance(original, str) else None,
    )


def append_list(record: CallRecord, strategy: str, text: str, state: ToolState) -> Decision | None:
    """A decision that appends ``text`` to a completed call's output (an insertion at its end); None if it has none.

    The appended text is byte-stable from then on, like a placeholder. ``tokens_saved`` is
    negative: what the text adds to every request.
    """
    output = state.get("output")
    if state.get("status") != "completed" or not isinstance(output, str) or output_is_cleared(state) or not text:
        return None
    end = len(output)
    value = output + text
    return Decision(
        record=record,
        strategy=strategy,
        field="output",
        value=value,
        tokens_saved=-max(1, tool_state_tokens({**state, "output": value}) - tool_state_tokens(state)),
        cuts=((end, end, text),),
        expect_length=end,
        is_list=True,
    )


def withdraw_list(added: Decision, state: ToolState) -> Decision | None:
    """A decision that takes a list out again: the output as stored (a patch with no cuts); None if it changed."""
    output = state.get("output")
    if not isinstance(output, str) or len(output) != added.expect_length:
        return None
    return Decision(
        record=added.record,
        strategy=added.strategy,
        field="output",
        value=output,
        tokens_saved=-added.tokens_saved,
        cuts=(),
        expect_length=len(output),
        is_list=True,
        withdraws=added,
    )


def sweep_edit(state: ToolState) -> Edit:
    """What `/dcp sweep` removes: a completed call's output, an errored call's inputs."""
    if state.get("status") == "error":
        return ShrinkInput(SWEPT_PLACEHOLDER)
    return ReplaceOutput(SWEPT_PLACEHOLDER)
