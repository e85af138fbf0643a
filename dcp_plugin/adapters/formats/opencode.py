"""The kinds of OpenCode's own ``{info, parts}`` messages (what pluggy hosts and the bridge send)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dcp_plugin.adapters.formats.kinds import Kind, Typed, input_kind, text_kind
from dcp_plugin.model.messages import info_of, parts_of

_ROLE_TEXT = {"user": Kind.USER_TEXT, "assistant": Kind.ASSISTANT_TEXT, "system": Kind.SYSTEM_TEXT}


def _signed(part: Mapping[str, Any]) -> bool:
    """Whether a reasoning part carries a provider signature (OpenCode keeps it in metadata, per provider)."""
    metadata = part.get("metadata")
    if not isinstance(metadata, dict):
        return False
    if metadata.get("signed") or metadata.get("signature"):
        return True
    return any(isinstance(v, dict) and (v.get("signature") or v.get("redactedData")) for v in metadata.values())


def classify(messages: Sequence[Any]) -> list[Typed]:
    """The kind of every part of an OpenCode message list; a tool part is two items, its input and its result."""
    out: list[Typed] = []
    for index, message in enumerate(messages):
        info = info_of(message)
        plain = Kind.COMPACTION_SUMMARY if info.get("summary") else _ROLE_TEXT.get(str(info.get("role")), Kind.UNKNOWN)
        for position, part in enumerate(parts_of(message)):
            if not isinstance(part, dict):
                out.append(Typed((index, position, 0), Kind.UNKNOWN))
                continue
            kind = part.get("type")
            if kind == "text":
                out.append(Typed((index, position, 0), text_kind(part.get("text"), plain)))
            elif kind == "reasoning":
                out.append(Typed((index, position, 0), Kind.REASONING_SIGNED if _signed(part) else Kind.REASONING))
            elif kind == "file":
                mime = str(part.get("mime") or "")
                out.append(Typed((index, position, 0), Kind.IMAGE if mime.startswith("image/") else Kind.FILE))
            elif kind == "compaction":
                out.append(Typed((index, position, 0), Kind.COMPACTION_SUMMARY))
            elif kind == "tool" and isinstance(part.get("state"), dict):
                state = part["state"]
                out.append(Typed((index, position, "input", 0), input_kind(state.get("input"))))
                if state.get("status") == "completed":
                    out.append(Typed((index, position, "output", 0), text_kind(state.get("output"), Kind.TOOL_RESULT)))
                elif state.get("status") == "error":
                    out.append(Typed((index, position, "output", 0), text_kind(state.get("error"), Kind.TOOL_ERROR)))
            else:
                out.append(Typed((index, position, 0), Kind.UNKNOWN))  # step markers, patches, snapshots: kept as they are
    return out
