"""The kinds of context: one name for what every item of a conversation is, in every format.

Every provider format (and OpenCode's own shape) classifies its items into these kinds; the
plugin's transformations keep them. A removal never makes an item vanish or change what it
is silently: a pruned tool result becomes a placeholder of a named kind that says what it
stands for (:data:`REPLACES`), and removed media leave typed markers (``[image removed: …]``).
Anything a format does not recognize is ``unknown`` and is passed through as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from dcp_plugin.pipeline.labels import neutral
from dcp_plugin.pipeline.placeholders import (
    DISCARDED_PREFIX,
    DUPLICATE_PLACEHOLDER,
    FAILED_INPUT_PLACEHOLDER,
    SUMMARY_HEADER,
    SUPERSEDED_PLACEHOLDER,
    SWEPT_PLACEHOLDER,
)


class Kind(StrEnum):
    """What an item of context is."""

    USER_TEXT = "user.text"
    SYSTEM_TEXT = "system.text"  # system and developer instructions
    ASSISTANT_TEXT = "assistant.text"
    REASONING = "reasoning"
    REASONING_SIGNED = "reasoning.signed"  # carries a provider signature or is encrypted: never edited
    TOOL_CALL = "tool.call"  # a call and its input
    TOOL_RESULT = "tool.result"  # a call's output
    TOOL_ERROR = "tool.error"  # a failed call's error
    IMAGE = "media.image"
    FILE = "media.file"  # documents, PDFs, audio: any media that is not an image
    COMPACTION_SUMMARY = "summary.compaction"  # a host's or provider's summary of earlier history
    # The plugin's own items.
    PLACEHOLDER_DUPLICATE = "dcp.placeholder.duplicate"
    PLACEHOLDER_SUPERSEDED = "dcp.placeholder.superseded"
    PLACEHOLDER_FAILED_INPUT = "dcp.placeholder.failed_input"
    PLACEHOLDER_SWEPT = "dcp.placeholder.swept"
    PLACEHOLDER_DISCARDED = "dcp.placeholder.discarded"  # the model discarded the output
    PLACEHOLDER = "dcp.placeholder"  # a dcp placeholder of a strategy this module does not list yet
    IMAGE_REMOVED = "dcp.removed.image"
    FILE_REMOVED = "dcp.removed.file"
    EXTRACTED_SUMMARY = "dcp.summary"  # facts the model kept from outputs it pruned
    INSTRUCTIONS = "dcp.instructions"  # the plugin's own words to the model: the system text, the prunable list
    UNKNOWN = "unknown"


# Which kinds each of the plugin's own kinds may stand in for: the only kind changes allowed.
REPLACES: dict[Kind, frozenset[Kind]] = {
    Kind.PLACEHOLDER_DUPLICATE: frozenset({Kind.TOOL_RESULT}),
    Kind.PLACEHOLDER_SUPERSEDED: frozenset({Kind.TOOL_CALL}),
    Kind.PLACEHOLDER_FAILED_INPUT: frozenset({Kind.TOOL_CALL}),
    Kind.PLACEHOLDER_SWEPT: frozenset({Kind.TOOL_RESULT, Kind.TOOL_CALL}),
    Kind.PLACEHOLDER_DISCARDED: frozenset({Kind.TOOL_RESULT}),
    Kind.PLACEHOLDER: frozenset({Kind.TOOL_RESULT, Kind.TOOL_ERROR, Kind.TOOL_CALL}),
    Kind.IMAGE_REMOVED: frozenset({Kind.IMAGE}),
    Kind.FILE_REMOVED: frozenset({Kind.FILE}),
    Kind.EXTRACTED_SUMMARY: frozenset({Kind.TOOL_RESULT}),
}

MEDIA_KINDS: frozenset[Kind] = frozenset({Kind.IMAGE, Kind.FILE})
SIGNED_KINDS: frozenset[Kind] = frozenset({Kind.REASONING_SIGNED})

# Placeholders are matched by their text up to the closing bracket, so a placeholder that
# later grows a suffix (an id the model can refer to) keeps its kind.
_PLACEHOLDERS: tuple[tuple[str, Kind], ...] = (
    (DUPLICATE_PLACEHOLDER.rstrip("]"), Kind.PLACEHOLDER_DUPLICATE),
    (SUPERSEDED_PLACEHOLDER.rstrip("]"), Kind.PLACEHOLDER_SUPERSEDED),
    (FAILED_INPUT_PLACEHOLDER.rstrip("]"), Kind.PLACEHOLDER_FAILED_INPUT),
    (SWEPT_PLACEHOLDER.rstrip("]"), Kind.PLACEHOLDER_SWEPT),
    (DISCARDED_PREFIX, Kind.PLACEHOLDER_DISCARDED),
)
_DCP_PREFIX = "[dcp: "
_SUMMARY_PREFIX = SUMMARY_HEADER[: len("[dcp: summary")]
_INSTRUCTIONS_PREFIX = "[dcp: instructions"
_MARKER = re.compile(r"\[(image|file) removed: ([^\]\n]*)\]")
_MARKER_KINDS = {"image": Kind.IMAGE_REMOVED, "file": Kind.FILE_REMOVED}


def placeholder_kind(text: object) -> Kind | None:
    """The kind of a text the plugin wrote (a placeholder, a marker, a summary), None for any other text."""
    if not isinstance(text, str) or not text.startswith(("[dcp: ", "[image removed: ", "[file removed: ")):
        return None
    for prefix, kind in _PLACEHOLDERS:
        if text.startswith(prefix):
            return kind
    marker = _MARKER.fullmatch(text)
    if marker is not None:
        return _MARKER_KINDS[marker.group(1)]
    if text.startswith(_SUMMARY_PREFIX):
        return Kind.EXTRACTED_SUMMARY
    if text.startswith(_INSTRUCTIONS_PREFIX):
        return Kind.INSTRUCTIONS
    return Kind.PLACEHOLDER if text.startswith(_DCP_PREFIX) else None


def media_marker(kind: Kind, detail: str = "") -> str:
    """The typed marker a removed image or file leaves, e.g. ``[image removed: image/png]``."""
    word = "image" if kind is Kind.IMAGE else "file"
    detail = neutral(" ".join(detail.split())) or "unnamed"
    return f"[{word} removed: {detail}]"


def text_kind(text: object, plain: Kind) -> Kind:
    """The kind of a text item: the plugin's own kind when it wrote it, else ``plain``."""
    return placeholder_kind(text) or plain


def input_kind(value: object) -> Kind:
    """The kind of a tool call's input: a placeholder kind when the plugin shrank strings in it."""
    found = _first_plugin_string(value, 0)
    return found if found is not None else Kind.TOOL_CALL


def _first_plugin_string(value: object, depth: int) -> Kind | None:
    if isinstance(value, str):
        return placeholder_kind(value)
    if depth > 50:
        return None
    items: Iterable[object]
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        return None
    for item in items:
        found = _first_plugin_string(item, depth + 1)
        if found is not None:
            return found
    return None


@dataclass(frozen=True, slots=True)
class Typed:
    """One item of a conversation and its kind; ``path`` locates it (indexes, then the block's slot)."""

    path: tuple[int | str, ...]
    kind: Kind


def kind_changes(before: Sequence[Typed], after: Sequence[Typed]) -> list[str]:
    """Every way ``after`` breaks "transformations keep kinds" against ``before``; empty when it keeps them.

    Items are compared by their owner (the path without its last step): within one owner,
    every kind after is one that was there before, or a plugin kind standing in for one that
    was; every removed image or file left a marker; nothing gained a kind from nowhere.
    """
    problems: list[str] = []
    old = _by_owner(before)
    new = _by_owner(after)
    for owner in old.keys() | new.keys():
        was = old.get(owner, [])
        now = new.get(owner, [])
        if not now and was:
            problems.append(f"{owner}: {len(was)} item(s) vanished")
            continue
        kinds_before = set(was)
        for kind in now:
            if kind in kinds_before:
                continue
            stands_for = REPLACES.get(kind)
            if stands_for is None or not (stands_for & kinds_before):
                problems.append(f"{owner}: {kind} appeared where there was {sorted(kinds_before)}")
        for media, marker in ((Kind.IMAGE, Kind.IMAGE_REMOVED), (Kind.FILE, Kind.FILE_REMOVED)):
            lost = was.count(media) - now.count(media)
            if lost > 0 and now.count(marker) - was.count(marker) < lost:
                problems.append(f"{owner}: {lost} {media} removed without a marker")
    return problems


def _by_owner(items: Iterable[Typed]) -> dict[tuple[int | str, ...], list[Kind]]:
    grouped: dict[tuple[int | str, ...], list[Kind]] = {}
    for item in items:
        grouped.setdefault(item.path[:-1], []).append(item.kind)
    return grouped
