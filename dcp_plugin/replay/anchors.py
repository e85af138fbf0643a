"""Edit anchors: whether pruning hid text the agent then copied into an edit (the quality yardstick).

When the agent edits a file, the text it replaces (an edit's ``oldString``, each of a
multiedit's edits, an apply_patch hunk's context and removed lines) was copied from something
it saw. The **anchor** of one such replacement is its longest line of at least
:data:`MIN_ANCHOR_CHARS` characters, whitespace-trimmed (so the line-number prefixes of read
outputs, which come before a line's own indentation, never hide a match). At the request the
agent answered with the edit, the anchor is **sourced** when the unpruned request holds it, and
**lost** when it is sourced but every place that held it was replaced by a placeholder: the
agent would have had to read the file again. Each lost anchor is put down to the strategy (or
peer rule) whose placeholder hid its newest source.

Matching is one substring search per anchor over the text of the messages the request sent,
laid end to end once per session, so a session of thousands of requests costs what its edits
cost, not what its requests times its history would.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_ANCHOR_CHARS = 25
PATCH_BEGIN = "*** Begin Patch"
# Keys an edit's replaced text goes by: OpenCode's, Claude Code's, and the `str_replace` tools'.
OLD_TEXT_KEYS = ("oldString", "old_string", "old_str")
EDITS_KEY = "edits"
Location = tuple[int, int, str]  # (message, part, field): the same key replay patches use
# Between two texts in the session's haystack: never inside an anchor (anchors are one line).
_SEPARATOR = "\n\x00\n"


def anchor_of(text: str) -> str | None:
    """The longest line of ``text`` of at least MIN_ANCHOR_CHARS characters, trimmed; None when none is."""
    best = ""
    for line in text.split("\n"):
        line = line.strip()
        if len(line) > len(best):
            best = line
    return best if len(best) >= MIN_ANCHOR_CHARS else None


def patch_hunks(patch: str) -> list[str]:
    """Each hunk's context and removed lines of an apply_patch text (OpenCode's and Codex's grammar).

    A hunk starts at an ``@@`` line (whose text after ``@@`` is context too) or at an
    ``*** Update File:`` header; ``+`` lines are new text and file headers of added files carry none.
    """
    hunks: list[list[str]] = []
    current: list[str] | None = None
    for line in patch.split("\n"):
        if line.startswith("*** "):
            current = [] if line.startswith("*** Update File:") else None
            if current is not None:
                hunks.append(current)
        elif current is None:
            continue
        elif line.startswith("@@"):
            context = line[2:].strip().removesuffix("@@").strip()
            current = [context] if context else []
            hunks.append(current)
        elif line[:1] in (" ", "-"):
            current.append(line[1:])
        elif line == "":
            current.append("")
    return ["\n".join(hunk) for hunk in hunks if any(hunk)]


def replaced_texts(tool_input: Any) -> list[str]:
    """The texts one edit call replaces: one per edit, multiedit entry or patch hunk."""
    if isinstance(tool_input, str):
        return patch_hunks(tool_input) if tool_input.lstrip().startswith(PATCH_BEGIN) else []
    if not isinstance(tool_input, Mapping):
        return []
    found: list[str] = []
    for key in OLD_TEXT_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            found.append(value)
            break
    edits = tool_input.get(EDITS_KEY)
    for edit in edits if isinstance(edits, list) else ():
        found.extend(replaced_texts(edit) if isinstance(edit, Mapping) else ())
    for value in tool_input.values():
        if isinstance(value, str) and value.lstrip().startswith(PATCH_BEGIN):
            found.extend(patch_hunks(value))
    return found


def edit_anchors(part: Mapping[str, Any]) -> list[str]:
    """The anchors of one tool part (none for a part that edits nothing)."""
    state = part.get("state")
    if part.get("type") != "tool" or not isinstance(state, Mapping):
        return []
    return [a for a in map(anchor_of, replaced_texts(state.get("input"))) if a is not None]


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a tool input, at every depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _part_texts(part: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, text) of what a part sends: its text, or a tool's input strings, output and error."""
    if isinstance(part.get("text"), str):
        yield "text", part["text"]
    state = part.get("state")
    if part.get("type") != "tool" or not isinstance(state, Mapping):
        return
    strings = "\n".join(_strings(state.get("input")))
    if strings:
        yield "input", strings
    for key in ("output", "error"):
        value = state.get(key)
        if isinstance(value, str) and value:
            yield key, value
        elif value is not None and not isinstance(value, str):
            yield key, json.dumps(value, ensure_ascii=False)


def holds(value: Any, anchor: str) -> bool:
    """Whether a (patched) field value still holds the anchor."""
    return any(anchor in text for text in _strings(value))


@dataclass(frozen=True, slots=True)
class LostAnchor:
    """One anchor the pruned request no longer held."""

    edit_message: int  # the message with the edit
    source: Location  # where the unpruned request held it last
    hidden_by: str  # the strategy or rule whose placeholder is there
    anchor: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "edit_message": self.edit_message,
            "source_message": self.source[0],
            "source_part": self.source[1],
            "hidden_by": self.hidden_by,
            "anchor": self.anchor,
        }


@dataclass
class AnchorTotals:
    """Edit anchors of one replay or of several: found, sourced, lost, and who hid each lost one."""

    anchors: int = 0  # replacements with an anchor
    sourced: int = 0
    lost: int = 0
    lost_by: dict[str, int] = field(default_factory=dict)
    lost_anchors: list[LostAnchor] = field(default_factory=list)

    @property
    def lost_percent(self) -> float:
        """Lost anchors as a share of the sourced ones."""
        return 100 * self.lost / self.sourced if self.sourced else 0.0

    def add(self, other: AnchorTotals) -> None:
        self.anchors += other.anchors
        self.sourced += other.sourced
        self.lost += other.lost
        for name, count in other.lost_by.items():
            self.lost_by[name] = self.lost_by.get(name, 0) + count
        self.lost_anchors += other.lost_anchors

    def to_dict(self, details: bool = False) -> dict[str, Any]:
        """The counts; ``details``: each lost anchor too."""
        data: dict[str, Any] = {
            "edit_anchors": self.anchors,
            "sourced": self.sourced,
            "lost": self.lost,
            "lost_percent": round(self.lost_percent, 2),
            "lost_by": dict(sorted(self.lost_by.items())),
        }
        if details:
            data["lost_anchors"] = [lost.to_dict() for lost in self.lost_anchors]
        return data

    def sentence(self) -> str:
        """`12 of 40 edits' anchors were in the request before the edit; 1 of them hidden (maskOldOutputs 1)`."""
        text = (
            f"Edit anchors: {self.sourced:,} of {self.anchors:,} edits' anchors were in the request before the edit; "
            f"{self.lost:,} of them hidden by a placeholder ({self.lost_percent:.1f} %)"
        )
        if self.lost_by:
            text += ": " + ", ".join(f"{name} {count:,}" for name, count in sorted(self.lost_by.items()))
        return text + "."


class AnchorIndex:
    """The session's sent texts laid end to end, to find where an anchor was in a request at once."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self._messages = messages
        self.totals = AnchorTotals()
        self.reindex()

    def reindex(self) -> None:
        """Lay the texts out again (the message list gained a message where no request had reached)."""
        texts: list[str] = []
        self._starts: list[int] = []  # offset of each text in the haystack
        self._where: list[Location] = []
        self._message_start: list[int] = []  # first text index of each message
        offset = 0
        for m, message in enumerate(self._messages):
            self._message_start.append(len(self._where))
            for p, part in enumerate(message.get("parts") or ()):
                if not isinstance(part, Mapping):
                    continue
                for name, text in _part_texts(part):
                    texts.append(text)
                    self._starts.append(offset)
                    self._where.append((m, p, name))
                    offset += len(text) + len(_SEPARATOR)
        self._message_start.append(len(self._where))
        self._haystack = _SEPARATOR.join(texts)

    def _offset(self, message: int) -> int:
        first = self._message_start[message]
        return self._starts[first] if first < len(self._starts) else len(self._haystack)

    def sources(self, anchor: str, begin: int, end: int) -> list[Location]:
        """Where ``messages[begin:end]`` hold the anchor, oldest first."""
        found: list[Location] = []
        low, high = self._offset(begin), self._offset(end)
        at = self._haystack.find(anchor, low, high)
        while at != -1:
            index = bisect.bisect_right(self._starts, at) - 1
            where = self._where[index]
            if not found or found[-1] != where:
                found.append(where)
            at = self._haystack.find(anchor, at + 1, high)
        return found

    def check(
        self,
        begin: int,
        end: int,
        patches: Mapping[Location, tuple[Any, int]],
        owners: Mapping[Location, str],
    ) -> AnchorTotals:
        """:meth:`evaluate`, added to the session's totals."""
        result = self.evaluate(begin, end, patches, owners)
        self.totals.add(result)
        return result

    def evaluate(
        self,
        begin: int,
        end: int,
        patches: Mapping[Location, tuple[Any, int]],
        owners: Mapping[Location, str],
    ) -> AnchorTotals:
        """The anchors of the edits in ``messages[end]`` against the request of ``messages[begin:end]``.

        ``patches``: (message, part, field) -> (value sent instead, tokens saved), keyed on the
        whole session's indexes; ``owners``: which strategy or rule wrote each of them.
        """
        result = AnchorTotals()
        if end >= len(self._messages):
            return result
        for part in self._messages[end].get("parts") or ():
            for anchor in edit_anchors(part) if isinstance(part, Mapping) else ():
                result.anchors += 1
                sources = self.sources(anchor, begin, end)
                if not sources:
                    continue
                result.sourced += 1
                if any(where not in patches or holds(patches[where][0], anchor) for where in sources):
                    continue
                result.lost += 1
                owner = owners.get(sources[-1], "?")
                result.lost_by[owner] = result.lost_by.get(owner, 0) + 1
                result.lost_anchors.append(LostAnchor(end, sources[-1], owner, anchor))
        return result
