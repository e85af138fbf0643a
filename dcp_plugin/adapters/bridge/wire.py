"""The wire form of decisions for a bridge client: JSON patches addressed by position, offsets in UTF-16."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcp_plugin.model.messages import locate
from dcp_plugin.pipeline.decisions import Decision


def _field(messages: Sequence[Any], decision: Decision) -> Any:
    state = locate(messages, decision.record)
    return state.get(decision.field) if state is not None else None


def utf16_index(text: str, index: int) -> int:
    """The position of ``text[index]`` counted in UTF-16 code units (JavaScript's string indexes)."""
    head = text[:index]
    return index + sum(1 for ch in head if ord(ch) > 0xFFFF)


# How much of each end of the original a patch names: enough that an output the host rewrote to
# the same length is told apart, short enough that the client checks it in constant time.
ENDS = 32


def expect_of(original: str, length: int | None) -> dict[str, Any]:
    """What the client checks the field it patches against: the original's UTF-16 length and ends."""
    return {"length": length, "head": original[:ENDS], "tail": original[-ENDS:]}


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
        current = _field(messages, decision)
        original = current if isinstance(current, str) else ""
        units = len(original) if original.isascii() else len(original.encode("utf-16-le", "surrogatepass")) // 2
        if decision.cuts is not None:
            if units == len(original):
                patch["cuts"] = [list(cut) for cut in decision.cuts]
                patch["expect"] = expect_of(original, decision.expect_length)
            else:
                patch["cuts"] = [[utf16_index(original, s), utf16_index(original, e), r] for s, e, r in decision.cuts]
                patch["expect"] = expect_of(original, units)
        else:
            patch["value"] = decision.value
            if decision.field == "output" and isinstance(current, str):
                # The client keeps this value and writes it on every request: only over the output
                # it was made for, never over one the host cleared or rewrote in place since.
                patch["expect"] = expect_of(original, units)
        out.append(patch)
    return out
