"""`/dcp pin` and `/dcp unpin`: read the ids the user typed, list the pinned outputs, and describe what changed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from dcp_plugin.host.prune_notice import plural
from dcp_plugin.host.rows import CallRow
from dcp_plugin.model.messages import FINAL_STATUSES, Message, locate
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.sizes import output_size

if TYPE_CHECKING:
    from dcp_plugin.host.results import PinOutcome, SessionView

# How many of the newest tool outputs the listing shows, so their ids are at hand.
RECENT = 8
# Words that may surround ids (`/dcp pin id 3kq7 and 8mzp`): not ids themselves.
_FILLER = frozenset({"id", "ids", "and"})
WHERE_IDS = (
    "An output's id is in its placeholder (`(id 3kq7)`) and in the model's prunable lists; "
    "`/dcp pin` lists the pinned and the newest outputs with theirs."
)


def parse_ids(args: Sequence[str]) -> list[str]:
    """The ids as typed, in order, without repeats: commas, brackets and the words `id`, `ids`, `and` are not ids."""
    found: list[str] = []
    for raw in " ".join(args).replace(",", " ").split():
        word = raw.strip("()[].;:")  # copied with the brackets of a placeholder's `(id 3kq7)`
        if word and word.lower() not in _FILLER and word not in found:
            found.append(word)
    return found


def _row(record: CallRow, messages: Sequence[Message], directory: str, view: SessionView) -> str:
    """`3kq7  read src/a.py  ~1,200 tokens`, with what becomes of the output."""
    state = locate(messages, record) or {}
    output = state.get("output")
    if state.get("status") == "error":
        size = f"failed (its error message: ~{output_size(state):,} tokens)"
    elif output not in (None, ""):
        size = f"~{output_size(state):,} tokens"
    else:
        size = "no output yet"
    notes = []
    if record.call_id in view.pinned:
        notes.append("pinned")
    if record.pruned_by is not None:
        notes.append(f"pruned ({record.pruned_by})" if record.written else f"to be pruned ({record.pruned_by})")
    tail = f", {', '.join(notes)}" if notes else ""
    return f"  {record.ident or '?'}  {call_label(record.tool, state.get('input'), directory)}  {size}{tail}"


def listing_text(view: SessionView, messages: Sequence[Message]) -> str:
    """The pinned outputs of the session, then the newest outputs with their ids (what can be pinned)."""
    records = view.records
    pinned = [r for r in records if r.call_id in view.pinned]
    lines: list[str] = []
    if pinned:
        them = "it" if len(pinned) == 1 else "them"
        lines.append(f"dcp pin: {plural(len(pinned), 'pinned output')} in this session (nothing prunes {them}):")
        lines += [_row(r, messages, view.directory, view) for r in pinned]
        lines.append("Unpin with /dcp unpin <id>.")
    else:
        lines.append("dcp pin: no outputs are pinned in this session.")
    recent = [r for r in records if r.status in FINAL_STATUSES and r.call_id not in view.pinned][-RECENT:]
    if recent:
        lines.append("Newest tool outputs (pin one with /dcp pin <id>):")
        lines += [_row(r, messages, view.directory, view) for r in recent]
    return "\n".join(lines)


def _named(records: Iterable[CallRow], messages: Sequence[Message], directory: str) -> str:
    """`3kq7 (read src/a.py), 8mzp (bash make test)`."""
    out = []
    for record in records:
        state = locate(messages, record) or {}
        out.append(f"{record.ident or '?'} ({call_label(record.tool, state.get('input'), directory)})")
    return ", ".join(out)


def outcome_text(outcome: PinOutcome, messages: Sequence[Message], directory: str) -> str:
    """The reply to `/dcp pin <ids>` or `/dcp unpin <ids>`: what changed, what already was so, which ids are unknown."""
    lines: list[str] = []
    if outcome.changed:
        what = plural(len(outcome.changed), "output")
        named = _named(outcome.changed, messages, directory)
        if outcome.pinned:
            lines.append(f"pinned {what}: {named}.")
            lines.append("Nothing prunes them now: not the strategies, not the model, not /dcp sweep.")
            if outcome.pruned:
                back = _named(outcome.pruned, messages, directory)
                lines.append(f"Sent whole again from the next request (placeholder removed): {back}.")
        else:
            lines.append(f"unpinned {what}: {named}. They may be pruned again.")
    if outcome.unchanged:
        already = "already pinned" if outcome.pinned else "not pinned"
        lines.append(f"{already}: {_named(outcome.unchanged, messages, directory)}.")
    if outcome.unknown:
        one = len(outcome.unknown) == 1
        lines.append(
            f"unknown {'id' if one else 'ids'}: {', '.join(outcome.unknown)} "
            f"(no tool output of this session has {'it' if one else 'them'})."
        )
        lines.append(WHERE_IDS)
    if not lines:
        lines.append("no ids given; nothing changed.")
    lines[0] = f"dcp {'pin' if outcome.pinned else 'unpin'}: {lines[0]}"
    return "\n".join(lines)
