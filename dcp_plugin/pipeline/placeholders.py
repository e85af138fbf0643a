"""Placeholders and patches: what a decision writes into a tool state, and writing it into the outgoing messages."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from dcp_plugin.pipeline.conversation import call_id_of
from dcp_plugin.pipeline.ids import short_id
from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.tokens import json_chars, tokens_removed, tool_state_tokens

# Every placeholder starts so. An output that already is one (a list pruned before, handed in
# again) is never replaced by another one, nor read as content by a rule.
PLACEHOLDER_PREFIX = "[dcp:"
# Stable strings: the same text every time keeps the provider's prompt cache warm. Every one is
# written with the id of the call it stands in for (see `tag`), so the model can name it.
DUPLICATE_PLACEHOLDER = "[dcp: output removed - the same call was made again later; see the newer result]"
SUPERSEDED_PLACEHOLDER = "[dcp: content removed - this file was read back later]"
FAILED_INPUT_PLACEHOLDER = "[dcp: input removed - call failed turns ago]"
SWEPT_PLACEHOLDER = "[dcp: removed by /dcp sweep]"
# The model's own prunes (the discard and extract tools), one text per reason.
DISCARDED_PREFIX = "[dcp: output discarded by the model"
DISCARDED_PLACEHOLDERS: dict[str, str] = {
    "noise": f"{DISCARDED_PREFIX} as noise]",
    "done": f"{DISCARDED_PREFIX}: the task that needed it is done]",
}
# The head of what `extract` leaves in place of an output; the model's distillation follows it.
SUMMARY_HEADER = "[dcp: summary - the model kept these facts of a pruned output]"

Field = Literal["input", "output"]
Cut = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class ReplaceOutput:
    """Replace a completed call's whole output by ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class ShrinkInput:
    """Replace every input string longer than ``text`` by it, at every depth; top-level ``keep`` keys stay."""

    text: str
    keep: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class CutOutput:
    """Replace ranges ``[start, end)`` of the original output string by short texts."""

    cuts: tuple[Cut, ...]


Edit = ReplaceOutput | ShrinkInput | CutOutput


def tag(text: str, ident: str | None) -> str:
    """A placeholder naming the call it stands in for: ``[dcp: ... (id 3kq7)]``.

    The id goes before the first ``]``, so a placeholder keeps the prefix its kind is
    recognized by (``formats.kinds``); texts that are not the plugin's (``[dcp:...]``) stay.
    """
    # A cut's text may start with the blank line it keeps before the placeholder.
    lead = len(text) - len(text.lstrip("\n"))
    if ident is None or not text.startswith(PLACEHOLDER_PREFIX, lead):
        return text
    end = text.find("]", lead)
    if end < 0 or text[:end].endswith(f" (id {ident})"):  # no end, or named already (a cut carried over)
        return text
    return f"{text[:end]} (id {ident}){text[end:]}"


def placeholder_for(text: str, call_id: str) -> str:
    """``text`` as written for the call ``call_id`` of a session where no other call shares its short id.

    What tests compare against: ``placeholder_for(DUPLICATE_PLACEHOLDER, "call_1")``.
    """
    return tag(text, short_id(call_id))


def retag(edit: Edit, ident: str | None) -> Edit:
    """The edit with every placeholder it writes naming ``ident``."""
    if ident is None:
        return edit
    if isinstance(edit, ReplaceOutput):
        return ReplaceOutput(tag(edit.text, ident))
    if isinstance(edit, ShrinkInput):
        return ShrinkInput(tag(edit.text, ident), edit.keep)
    return CutOutput(tuple((start, end, tag(text, ident)) for start, end, text in edit.cuts))


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
    value: Any
    tokens_saved: int
    cuts: tuple[Cut, ...] | None = None
    expect_length: int | None = None
    applied_at: int | None = None
    superseded: bool = False
    replaces: Decision | None = None
    note: bool = False  # the plugin's own text added to an output (the prunable list), not a prune
    withdraws: Decision | None = None  # the note this decision takes out again (the output as it was)

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


def is_placeholder(value: Any) -> bool:
    """Whether a value is a whole placeholder the plugin wrote."""
    return isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIX)


def output_is_cleared(state: dict[str, Any]) -> bool:
    """Whether the host already sends a cleared text instead of this output (OpenCode's compaction)."""
    when = state.get("time")
    return isinstance(when, dict) and bool(when.get("compacted"))


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


def realize(edit: Edit, state: dict[str, Any]) -> tuple[Field, Any, tuple[Cut, ...] | None] | None:
    """(field, new value, cuts) of an edit on a call's state; None when it would not make the call smaller.

    A placeholder never makes a part bigger and never adds a field the state did not have:
    outputs that are missing, not strings and not larger than the placeholder as JSON, or
    already cleared by the host, are left alone.
    """
    if isinstance(edit, ReplaceOutput):
        if state.get("status") != "completed" or "output" not in state or output_is_cleared(state):
            return None
        output = state["output"]
        if output is None or json_chars(output) <= len(edit.text) or is_placeholder(output):
            return None
        return "output", edit.text, None
    if isinstance(edit, ShrinkInput):
        tool_input = state.get("input")
        if not isinstance(tool_input, dict):
            return None
        value = shrink_strings(tool_input, edit.text, edit.keep)
        return ("input", value, None) if value != tool_input else None
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


def decide(record: CallRecord, strategy: str, edit: Edit, state: dict[str, Any]) -> Decision | None:
    """The decision an edit makes on a call, with what it saves; None when it saves nothing.

    Its placeholders name the call's id (:func:`tag`).
    """
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


def note(record: CallRecord, strategy: str, text: str, state: dict[str, Any]) -> Decision | None:
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
        note=True,
    )


def withdrawal(added: Decision, state: dict[str, Any]) -> Decision | None:
    """A decision that takes a note out again: the output as stored (a patch with no cuts); None if it changed."""
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
        note=True,
        withdraws=added,
    )


def sweep_edit(state: dict[str, Any]) -> Edit:
    """What `/dcp sweep` removes: a completed call's output, an errored call's inputs."""
    if state.get("status") == "error":
        return ShrinkInput(SWEPT_PLACEHOLDER)
    return ReplaceOutput(SWEPT_PLACEHOLDER)


class Desync(Exception):
    """A decided call is no longer where the ledger saw it: the history changed under us."""


Patch = tuple[Decision, dict[str, Any]]


class Patches(Sequence[Patch]):
    """The (decision, tool state) pairs of one request, held as two parallel lists.

    A long session re-applies thousands of placeholders on every request. One tuple per pair
    would be thousands of new container objects per request, each one the cyclic collector
    then has to scan (measured: about a quarter of a warm request at 20,000 messages); two
    flat lists cost two objects. Iterating yields ``(decision, state)`` pairs.
    """

    __slots__ = ("decisions", "states")

    def __init__(self, decisions: list[Decision] | None = None, states: list[dict[str, Any]] | None = None) -> None:
        self.decisions: list[Decision] = decisions if decisions is not None else []
        self.states: list[dict[str, Any]] = states if states is not None else []

    def __len__(self) -> int:
        return len(self.decisions)

    def __iter__(self) -> Iterator[Patch]:
        return zip(self.decisions, self.states, strict=False)

    @overload
    def __getitem__(self, index: int) -> Patch: ...

    @overload
    def __getitem__(self, index: slice) -> Patches: ...

    def __getitem__(self, index: int | slice) -> Patch | Patches:
        if isinstance(index, slice):
            return Patches(self.decisions[index], self.states[index])
        return self.decisions[index], self.states[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Patches):
            return self.decisions == other.decisions and self.states == other.states
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"Patches({list(self)!r})"


def plan(messages: Sequence[Any], applied: Sequence[Decision], *, since_token: bool = False) -> Patches:
    """(decision, state) pairs for every applied decision still in force; Desync if a call moved.

    A decision whose field the host changed since it was made (cleared, nulled, replaced) is left
    out (:func:`~dcp_plugin.pipeline.freshness.still_fits`).

    ``since_token``: ``applied`` is what came after a client's patch token, added to the patches
    it keeps; a withdrawal (the output as stored, taking a list out) is then a patch to send, while
    a whole set simply leaves the output alone. Pure: nothing in ``messages`` changes (the bridge
    plans against its never-patched mirror).
    """
    # Here until patches get their own module: freshness reads this one.
    from dcp_plugin.pipeline.freshness import still_fits

    decisions: list[Decision] = []
    states: list[dict[str, Any]] = []
    keep_decision = decisions.append
    keep_state = states.append
    for decision in applied:
        if decision.superseded or (decision.withdraws is not None and not since_token):
            continue
        record = decision.record
        call_id = record.call_id
        try:
            message = messages[record.message_index]
            part = message["parts"][record.part_index]
            state = part["state"]
        except (IndexError, KeyError, TypeError):
            raise Desync(call_id) from None
        if type(state) is not dict:
            raise Desync(call_id)
        if part.get("callID") != call_id and call_id_of(part, message, record.message_index, record.part_index) != call_id:
            raise Desync(call_id)
        if decision.withdraws is None and not still_fits(decision, state):
            continue  # the host changed the field since: it goes out as the host sent it
        keep_decision(decision)
        keep_state(state)
    return Patches(decisions, states)


def apply(patches: Patches) -> None:
    """Write the placeholders; plain dict stores, so this step cannot fail halfway."""
    for decision, state in zip(patches.decisions, patches.states, strict=False):
        value = decision.value
        # Inputs are copied so that a host mutating what it sent cannot alter our cached value.
        state[decision.field] = dict(value) if type(value) is dict else value


def _original(messages: Sequence[Any], decision: Decision) -> str:
    record = decision.record
    value = messages[record.message_index]["parts"][record.part_index]["state"].get(decision.field)
    return value if isinstance(value, str) else ""


def utf16_index(text: str, index: int) -> int:
    """The position of ``text[index]`` counted in UTF-16 code units (JavaScript's string indexes)."""
    head = text[:index]
    return index + sum(1 for ch in head if ord(ch) > 0xFFFF)


def to_wire(messages: Sequence[Any], decisions: Sequence[Decision]) -> list[dict[str, Any]]:
    """The decisions as plain JSON patches for a bridge client, addressed by position and checked by ids.

    Cut offsets and the expected length are in UTF-16 code units, as JavaScript counts them
    (PROTOCOL.md): a character outside the BMP is one position here and two there.
    """
    out: list[dict[str, Any]] = []
    for decision in decisions:
        record = decision.record
        patch: dict[str, Any] = {
            "messageIndex": record.message_index,
            "partIndex": record.part_index,
            "messageID": record.message_id,
            "partID": record.part_id,
            "callID": record.call_id,
            "field": decision.field,
        }
        if decision.cuts is not None:
            original = _original(messages, decision)
            if original.isascii() or not any(ord(ch) > 0xFFFF for ch in original):
                patch["cuts"] = [list(cut) for cut in decision.cuts]
                patch["expect"] = {"length": decision.expect_length}
            else:
                patch["cuts"] = [[utf16_index(original, s), utf16_index(original, e), r] for s, e, r in decision.cuts]
                patch["expect"] = {"length": utf16_index(original, len(original))}
        else:
            patch["value"] = decision.value
        out.append(patch)
    return out
