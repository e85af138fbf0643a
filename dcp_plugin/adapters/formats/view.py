"""The OpenCode-shaped view a provider adapter builds, and the map from its tool calls back to the provider's items.

The pipeline only reads ``{info, parts}`` messages. An adapter walks the provider's list
and builds new dicts in that shape (never touching the caller's objects), recording for every
tool call where its call and its result live in the provider list (:class:`Site`). A builder
can be fed more items later (a list that grew). The view itself is never patched: for the
runtime's decisions, :func:`item_of` and :func:`edits_of` say which provider items must be
rebuilt and with what; every other item is passed back by reference.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from dcp_plugin.adapters.formats.kinds import Kind, media_marker
from dcp_plugin.model.messages import Message
from dcp_plugin.pipeline.decisions import Decision

SELF = -1  # a Site position meaning "the provider item itself" (not a block inside it)


@dataclass(slots=True)
class Media:
    """An image or file inside a tool result, and the view part that stands for it."""

    kind: Kind
    detail: str
    part: dict[str, Any]


@dataclass(slots=True)
class Site:
    """Where one tool call and its result live in the provider list: (item index, position inside it)."""

    call: tuple[int, int]
    result: tuple[int, int] | None = None
    state: dict[str, Any] = field(default_factory=dict)
    media: list[Media] = field(default_factory=list)


@dataclass(slots=True)
class ItemEdit:
    """One field of one call to rewrite in a provider item: ``position`` inside the item, the new value."""

    position: int
    field: str
    value: Any
    site: Site
    whole: bool  # the whole field was replaced (a placeholder), not cut: media in it go too


@dataclass(slots=True)
class View:
    """The view's messages, each one's provider index, and every tool call's site by its view call id."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    sources: list[int] = field(default_factory=list)
    sites: dict[str, Site] = field(default_factory=dict)

    def history(self) -> list[Message]:
        """The messages in the model's shape, as :meth:`ViewBuilder.message` builds them, for the runtime."""
        return cast("list[Message]", self.messages)


class ViewBuilder:
    """Builds a :class:`View` in one pass over a provider list; pairs results with their calls."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.view = View()
        self._open: dict[str, list[str]] = {}  # provider call id -> view call ids still waiting for a result
        self._seen: dict[str, int] = {}
        self._parts_of: dict[str, list[dict[str, Any]]] = {}  # view call id -> its message's parts
        self.carry: Any = None  # what a format carries from one item to the next (an open response)

    def message(self, role: str, source: int, ident: str, info: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Start a view message for provider item ``source``; returns its parts list to append to."""
        parts: list[dict[str, Any]] = []
        data: dict[str, Any] = {"id": f"{source}:{ident}", "sessionID": self.session_id, "role": role}
        if info:
            data.update(info)
        self.view.messages.append({"info": data, "parts": parts})
        self.view.sources.append(source)
        return parts

    def call(
        self, parts: list[dict[str, Any]], call_id: str, tool: str, tool_input: dict[str, Any], where: tuple[int, int]
    ) -> None:
        """A tool call at ``where``; it waits for its result (status pending until one arrives)."""
        count = self._seen.get(call_id, 0)
        self._seen[call_id] = count + 1
        # Some providers repeat call ids across steps (e.g. "call_0" every step): keep view ids unique.
        view_id = call_id if count == 0 else f"{call_id}#{count}"
        state: dict[str, Any] = {"status": "pending", "input": tool_input}
        parts.append({"type": "tool", "tool": tool, "callID": view_id, "state": state})
        self.view.sites[view_id] = Site(where, None, state)
        self._parts_of[view_id] = parts
        self._open.setdefault(call_id, []).append(view_id)

    def result(
        self,
        call_id: str,
        where: tuple[int, int],
        text: str,
        *,
        error: bool = False,
        media: Sequence[tuple[Kind, str]] = (),
    ) -> bool:
        """The result of the newest call with ``call_id`` still waiting; False when no call waits for it."""
        waiting = self._open.get(call_id)
        if not waiting:
            return False
        view_id = waiting.pop()
        site = self.view.sites[view_id]
        site.result = where
        state = site.state
        if error:
            state["status"] = "error"
            state["error"] = text
        else:
            state["status"] = "completed"
            state["output"] = text
        if media:
            # Media ride along as file parts after the call, so the budget counts them as media.
            owner = self._parts_of[view_id]
            for kind, detail in media:
                part = {"type": "file", "mime": detail.split(" ", 1)[0] or "application/octet-stream", "filename": detail}
                owner.append(part)
                site.media.append(Media(kind, detail, part))
        return True


def digest(*texts: str) -> str:
    """A short stable fingerprint of some texts (message ids for providers that have none)."""
    h = hashlib.blake2b(digest_size=8)
    for text in texts:
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def media_digest(data: object) -> str:
    """A cheap stand-in for hashing media: its length and its ends (base64 images are megabytes)."""
    if isinstance(data, str):
        return f"{len(data)}:{data[:48]}:{data[-48:]}"
    return type(data).__name__


def edits_of(view: View, decisions: Iterable[Decision]) -> list[ItemEdit]:
    """The rewrites some decisions ask for: each one's place and the value a placeholder writes there."""
    edits = []
    for decision in decisions:
        site = view.sites.get(decision.call_id)
        where = None if site is None else (site.result if decision.field == "output" else site.call)
        if site is not None and where is not None:
            value = decision.value
            # A copy, so that a host changing what it sent cannot alter the decision's value.
            edits.append(ItemEdit(where[1], decision.field, dict(value) if type(value) is dict else value, site, decision.cuts is None))
    return edits


def item_of(view: View, decision: Decision) -> int | None:
    """The index of the provider item a decision rewrites, None when the view has no place for it."""
    site = view.sites.get(decision.call_id)
    where = None if site is None else (site.result if decision.field == "output" else site.call)
    return None if where is None else where[0]


def markers(edit: ItemEdit) -> list[str]:
    """The typed markers an output edit leaves for the media it removes."""
    if edit.field != "output" or not edit.whole:
        return []
    return [media_marker(m.kind, m.detail) for m in edit.site.media]
