"""Judging one call of discard, extract or restore: what it prunes or brings back, or why it is refused.

A judgment reads only the history before the message the call is in (the request the model
answered with it) and the session's state derived from that history, so judging a call when
the host executes it and judging it again when it reappears in the history (the next request,
a restart, a replay) agree. The session judges a call it finds in the history where the host ran
it: at the request's point, before what strategies decide once the answer arrived. Calls in one
message are judged independently of each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import dcp_plugin.pipeline.modeltools.parts as parts
import dcp_plugin.pipeline.modeltools.texts as texts
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.model.messages import Message, ToolState
from dcp_plugin.model.tokens import estimate_output_tokens
from dcp_plugin.pipeline.decisions import CallRecord, Decision, Edit, ReplaceOutput, decide
from dcp_plugin.pipeline.ids import normalize_id
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.ledger import Ledger
from dcp_plugin.pipeline.modeltools.definitions import DISCARD, EXTRACT, PRUNING_TOOLS, REASONS, RESTORE
from dcp_plugin.pipeline.modeltools.guard import LoopGuard
from dcp_plugin.pipeline.placeholders import DISCARDED_PLACEHOLDERS, SUMMARY_HEADER
from dcp_plugin.pipeline.protection import PathProtector, extract_paths
from dcp_plugin.pipeline.sizes import output_size

# Why the model may not prune an output the user pinned (`/dcp pin`).
PINNED = "pinned by the user"
# More ids than this in one call is refused: no listed session has that many outputs worth it.
MAX_IDS = 200


@dataclass(frozen=True, slots=True)
class Call:
    """A call of one of the tools: what the model asked, and where in the history it asked it."""

    name: str
    arguments: object
    call_id: str
    message_index: int  # the message the call is in; only older calls can be named
    step: int
    turn: int


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a call does: accepted with its prunes (or restored outputs), or refused; and the text the model gets."""

    call_id: str
    tool: str
    accepted: bool
    text: str
    title: str
    prunes: tuple[tuple[CallRecord, Edit], ...] = ()
    outputs: int = 0  # outputs pruned or restored
    tokens: int = 0  # tokens the prunes remove from every request, or the restore brings back
    restored: tuple[str, ...] = ()  # the call ids whose outputs an accepted restore brought back
    part: int = 1  # the part of those outputs it brought back (see parts)

    @property
    def pruned(self) -> bool:
        """Whether this call prunes something (an accepted discard or extract)."""
        return self.accepted and bool(self.prunes)


@dataclass(slots=True)
class Scope:
    """The session as a call sees it: the ledger, the messages, the config, the guard, who may be listed."""

    ledger: Ledger
    messages: Sequence[Message]
    config: DcpConfig
    protector: PathProtector
    directory: str
    guard: LoopGuard
    valid: Callable[[int, int], list[str]]  # (message index, turn) -> prunable ids, largest first
    protected_tools: frozenset[str] = field(default_factory=frozenset)
    pinned: frozenset[str] = field(default_factory=frozenset)  # call ids the user pinned


def protected_tools(config: DcpConfig) -> frozenset[str]:
    """Tools whose outputs the model may not prune: the built-in list and ``tools.protectedTools``."""
    return HARDCODED_PROTECTED_TOOLS | frozenset(config.tools.protected_tools)


def judge(scope: Scope, call: Call) -> Verdict:
    """The verdict on one call; never raises for anything the model sends."""
    tools = scope.config.tools
    if not tools.enabled(call.name):
        return _refusal(call, "changed", [f"{call.name} is turned off in this project's dcp settings"])
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    ids = read_ids(arguments.get("ids"))
    if isinstance(ids, str):
        return _refusal(call, _action(call.name), [ids])
    if call.name == RESTORE:
        part = read_part(arguments.get("part"))
        if isinstance(part, str):
            return _refusal(call, "restored", [part])
        return _restore(scope, call, ids, part)
    left = scope.guard.cooldown_left(tools, call.step)
    if scope.guard.paused(call.turn):
        problem = (
            f"{call.name} is paused after {tools.max_failures} refused calls in a row, until the user's next "
            "message; go on with the task"
        )
        return _refusal(call, _action(call.name), [problem])
    if left:
        steps = "step" if left == 1 else "steps"
        return _refusal(call, _action(call.name), [f"you pruned a moment ago; go on with the task for {left} more {steps}"])
    edits = _edits(call, arguments, ids)
    if isinstance(edits, str):
        return _refusal(call, _action(call.name), [edits])
    return _prune(scope, call, edits)


def read_ids(value: object) -> list[str] | str:
    """The ids a call names, normalized and without repeats; a string saying what is wrong otherwise."""
    if isinstance(value, str):
        # "3kq7, 8mzp", "id 3kq7 and id 8mzp": every word but the connecting ones.
        value = [piece for piece in value.replace(",", " ").split() if piece.lower() not in ("id", "ids", "and")]
    if not isinstance(value, list):
        return 'ids must be a list of ids, e.g. ["3kq7"]'
    if not value:
        return "ids is empty: name at least one output"
    if len(value) > MAX_IDS:
        return f"at most {MAX_IDS} ids per call"
    found: list[str] = []
    for position, raw in enumerate(value):
        ident = normalize_id(raw)
        if ident is None:
            return f"ids[{position}] is not an id: {json.dumps(raw)[:40]}"
        if ident not in found:
            found.append(ident)
    return found


def _action(name: str) -> str:
    return {DISCARD: "discarded", EXTRACT: "extracted", RESTORE: "restored"}.get(name, "changed")


def _refusal(call: Call, action: str, problems: list[str]) -> Verdict:
    return Verdict(call.call_id, call.name, False, texts.refused(action, problems), f"{call.name}: refused")


def _edits(call: Call, arguments: dict[str, Any], ids: list[str]) -> list[tuple[str, Edit]] | str:
    """(id, edit) per target, from the call's reason or distillation; a string saying what is wrong otherwise."""
    if call.name == DISCARD:
        reason = arguments.get("reason")
        reason = reason.strip().lower() if isinstance(reason, str) else reason
        if reason not in REASONS:
            return f"reason must be one of: {', '.join(REASONS)}"
        edit = ReplaceOutput(DISCARDED_PLACEHOLDERS[str(reason)])
        return [(ident, edit) for ident in ids]
    distillation = arguments.get("distillation")
    if isinstance(distillation, str):
        distillation = [distillation]
    if isinstance(distillation, dict):
        keyed = {normalize_id(k): v for k, v in distillation.items()}
        distillation = [keyed.get(ident) for ident in ids]
    if not isinstance(distillation, list) or len(distillation) != len(ids):
        got = len(distillation) if isinstance(distillation, list) else 0
        return f"distillation must hold one entry per id, in the same order ({got} for {len(ids)} ids)"
    edits: list[tuple[str, Edit]] = []
    for ident, text in zip(ids, distillation, strict=False):
        if not isinstance(text, str) or not text.strip():
            return f"the distillation for {ident} is empty: write the facts to keep, or use discard"
        edits.append((ident, ReplaceOutput(f"{SUMMARY_HEADER}\n{texts.quoted_markers(text.strip())}")))
    return edits


@dataclass(frozen=True, slots=True)
class _Target:
    """A call an id names: its record, its state in the messages, and its label for the model."""

    ident: str
    record: CallRecord
    state: ToolState
    label: str


def _targets(scope: Scope, call: Call, ids: Sequence[str]) -> tuple[list[_Target], list[str]]:
    """The calls the ids name, and a problem for each id that names nothing the call may prune or restore."""
    found: list[_Target] = []
    unknown: list[str] = []
    for ident in ids:
        record = scope.ledger.by_ident.get(ident)
        state = Ledger.state_of(scope.messages, record) if record is not None else None
        if record is None or record.message_index >= call.message_index or state is None:
            unknown.append(f"{ident}: no tool output has this id (misspelled, or from an undone part of the conversation)")
        else:
            found.append(_Target(ident, record, state, call_label(record.tool, state.get("input"), scope.directory)))
    return found, unknown


def _why_not(scope: Scope, call: Call, target: _Target, edit: Edit) -> str | int:
    """Why the call may not prune this output (a problem for the model), or the tokens pruning it frees."""
    record, state = target.record, target.state
    paths = extract_paths(record.tool, state.get("input"))
    tp = scope.config.turn_protection
    owner = record.output_decision
    if record.call_id in scope.pinned:
        return PINNED
    if record.tool in scope.protected_tools:
        return f"{record.tool} outputs are protected"
    if scope.protector.protected_path(record.tool, state.get("input"), paths) is not None:
        return "a protected file"
    if state.get("status") != "completed":
        return "the call " + ("failed, so it has no output" if state.get("status") == "error" else "has not finished")
    if tp.enabled and call.turn - record.turn < tp.turns:
        return f"made in the last {tp.turns} user turns, which are protected"
    if owner is not None and owner.cuts is None:  # a partial cut (stale diagnostics) gives way to a whole prune
        when = "" if owner.applied_at is not None else "; its placeholder is written when that pays"
        return f"already pruned ({owner.strategy}{when})"
    preview = decide(record, call.name, edit, state)
    if preview is None:
        return "the distillation is not shorter than the output" if call.name == EXTRACT else "the output is already shorter than a placeholder"
    return preview.tokens_saved


def _prune(scope: Scope, call: Call, edits: list[tuple[str, Edit]]) -> Verdict:
    targets, unknown = _targets(scope, call, [ident for ident, _ in edits])
    edit_of = dict(edits)
    problems: list[str] = list(unknown)
    prunes: list[tuple[CallRecord, Edit]] = []
    labels: list[str] = []
    removed = 0
    held = 0  # the outputs' sizes, as the list and the toast show them
    for target in targets:
        verdict = _why_not(scope, call, target, edit_of[target.ident])
        if isinstance(verdict, str):
            problems.append(f"{target.ident} ({target.label}): {verdict}")
        else:
            prunes.append((target.record, edit_of[target.ident]))
            labels.append(f"{target.ident} {target.label}")
            removed += verdict
            held += output_size(target.state)
    minimum = scope.config.tools.min_tokens
    if not problems and removed < minimum:
        problems.append(
            f"together pruning them frees {texts.tokens(removed)}, less than a prune is worth ({texts.tokens(minimum)}); "
            "keep them"
        )
    if problems:
        if unknown:
            problems.append(texts.valid_ids(scope.valid(call.message_index, call.turn), "prunable outputs"))
        return _refusal(call, _action(call.name), problems)
    text = texts.pruned(_action(call.name), labels, held)
    title = f"{call.name}: {texts.outputs(len(prunes))}, {texts.tokens(held)}"
    return Verdict(call.call_id, call.name, True, text, title, tuple(prunes), len(prunes), removed)


def restorable(record: CallRecord) -> list[Decision]:
    """The decisions whose placeholders are written for a call now: what restore brings back.

    A decision waiting for the scheduler leaves the one it replaces written meanwhile.
    """
    found: list[Decision] = []
    for decision in (record.output_decision, record.input_decision):
        while decision is not None and (decision.applied_at is None or decision.superseded):
            decision = decision.replaces
        if decision is not None and not decision.is_list:
            found.append(decision)
    return found


def read_part(value: object) -> int | str:
    """The part of a restore a call asks for (1 when it names none); a string saying what is wrong otherwise."""
    if value is None:
        return 1
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"part must be a whole number from 1, got {json.dumps(value)[:40]}"
    return value


def _restore(scope: Scope, call: Call, ids: list[str], part: int) -> Verdict:
    targets, unknown = _targets(scope, call, ids)
    sections: list[tuple[str, str]] = []
    problems: list[str] = list(unknown)
    restored: list[str] = []
    idents: list[str] = []
    for target in targets:
        ident, record, state, label = target.ident, target.record, target.state, target.label
        if scope.guard.restored_this_turn(record.call_id, call.turn, part):
            what = "already restored" if part == 1 else f"part {part} already restored"
            problems.append(f"{ident} ({label}): {what} in this user turn; its content is in that result")
            continue
        decisions = restorable(record)
        if not decisions:
            waiting = record.output_decision is not None or record.input_decision is not None
            problems.append(f"{ident} ({label}): not pruned{' yet' if waiting else ''}; its content is in the conversation")
            continue
        for decision in decisions:
            original = state.get(decision.field)
            if original == decision.value:
                problems.append(f"{ident} ({label}): the host sent the pruned copy, so the original is not at hand")
                continue
            body = original if isinstance(original, str) else json.dumps(original, ensure_ascii=False, indent=1)
            sections.append((f"{ident} {label} ({decision.field}, pruned by {decision.strategy})", body))
            if record.call_id not in restored:
                restored.append(record.call_id)
                idents.append(ident)
    if not sections:
        if unknown:
            problems.append(texts.valid_ids(_restorable_ids(scope, call), "pruned outputs"))
        return _refusal(call, "restored", problems)
    # The host cuts a long tool result short: a long restore comes in parts the model asks for one by one.
    pieces = parts.split(texts.restored_content(sections))
    if part > len(pieces):
        return _refusal(call, "restored", [f"part {part} does not exist: this restore has {texts.parts(len(pieces))}"])
    piece = pieces[part - 1]
    restored_tokens = estimate_output_tokens(piece)
    of = f", part {part} of {len(pieces)}" if len(pieces) > 1 else ""
    title = f"restore: {texts.outputs(len(sections))}, {texts.tokens(restored_tokens)}{of}"
    text = texts.restored(len(sections), piece, part, len(pieces), problems, idents)
    return Verdict(call.call_id, call.name, True, text, title, (), len(sections), restored_tokens, tuple(restored), part)


def _restorable_ids(scope: Scope, call: Call) -> list[str]:
    return [
        r.ident
        for r in scope.ledger.records
        if r.ident is not None and r.message_index < call.message_index and restorable(r)
    ]


__all__ = [
    "MAX_IDS",
    "PINNED",
    "PRUNING_TOOLS",
    "Call",
    "Scope",
    "Verdict",
    "judge",
    "protected_tools",
    "read_ids",
    "read_part",
    "restorable",
]
