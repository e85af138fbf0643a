"""The wire form of decisions for a bridge client: JSON patches addressed by position, offsets in UTF-16."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcp_plugin.model.messages import locate
from dcp_plugin.pipeline.decisions import Decision


def _original(messages: Sequence[Any], decision: Decision) -> str:
    state = locate(messages, decision.record)
    value = state.get(decision.field) if state is not None else None
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
