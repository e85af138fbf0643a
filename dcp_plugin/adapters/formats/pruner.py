"""One entry point per provider format: prune a message list right before it is sent.

A host builds one :class:`Pruner` per process (it holds the sessions, like any other host's
runtime) and calls the method for its format before every request; the returned list is what
it sends. The caller's list and its items are never modified: items the plugin rewrites are
new objects, every other item is passed back as the same object. Any failure inside the
plugin is logged and the caller's own list comes back (fail open).

Hosts append to their message lists, so the view of a session is kept between requests and
only the items added since are read: a list whose first items equal the ones seen last time
(as they were then: an item changed in place since is seen changed) is a continuation;
anything else is read from scratch, and the session's decisions start over with it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dcp_plugin.adapters.formats.adapter import FORMATS, OPENAI_CHAT, OPENAI_RESPONSES, Adapter, with_system
from dcp_plugin.adapters.formats.usage import usage_tokens
from dcp_plugin.adapters.formats.view import View, ViewBuilder, edits_of, item_of
from dcp_plugin.commands.dispatch import COMMAND, answer
from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.idle import IDLE_SECONDS, MAX_SESSIONS, SessionLru
from dcp_plugin.host.notifier import Notify
from dcp_plugin.host.results import Outgoing
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.pipeline.decisions import Decision

log = logging.getLogger("dcp_plugin")

# The caller's item type (a provider's message dicts, LangChain's message objects): a list of them
# comes back, rewritten items being new objects of the same kind.
Item = TypeVar("Item")


@dataclass(frozen=True, slots=True)
class MediaRemoved:
    """Images and files a request no longer carries because their tool results were pruned."""

    count: int = 0
    tokens: int = 0  # counted with contextBudget.imageTokenEstimate each


@dataclass(slots=True)
class _Rebuilt:
    decisions: list[Decision]  # in force on this item
    item: Any  # the item rebuilt with them
    media: int  # images and files they removed


@dataclass(eq=False, slots=True)
class _Session:
    """A session's view, the provider items it was read from, and the items rebuilt last time."""

    adapter: str
    key: Any
    items: list[Any]  # the items read so far, as they were when read (see _as_read), or themselves (_same)
    builder: ViewBuilder
    rebuilt: dict[int, _Rebuilt] = field(default_factory=dict)  # provider item index -> its rewrite
    token: tuple[int, int] | None = None  # the runtime's token for the decisions rebuilt so far
    media: int = 0
    model: ModelRef | None = None  # the model of the previous request: it answered the messages added since
    format: Adapter | None = None  # the adapter the session's items are read with


# Deeper than this an item's containers are kept by reference: a change in place there goes unseen
# (no provider nests its items anywhere near this deep).
_COPY_DEPTH = 64


def _as_read(value: Any, depth: int = 0) -> Any:
    """``value`` with its dicts and lists copied (leaves shared): what it was, if the host edits it in place later.

    Compared with the host's item on every later request: the comparison runs in C and, the
    leaves being the same objects until the host replaces one, costs one step per container
    entry, not per character.
    """
    kind = type(value)
    if depth >= _COPY_DEPTH or (kind is not dict and kind is not list):
        return value
    if kind is dict:
        return {key: _as_read(item, depth + 1) for key, item in value.items()}
    return [_as_read(item, depth + 1) for item in value]


def _same(value: Any) -> Any:
    """``value`` itself: what is kept of an item for a host that never changes one in place."""
    return value


def _name_models(messages: list[dict[str, Any]], answered_by: ModelRef, upcoming: ModelRef) -> None:
    """Name models on new view messages as OpenCode does: who answered, and the model a turn goes to.

    Provider lists carry no model per message; without one the runtime looks for the newest
    message that names a model across the whole history on every request.
    """
    for message in messages:
        info = message["info"]
        if info["role"] == "assistant":
            info["modelID"] = answered_by.model_id
            if answered_by.provider_id:
                info["providerID"] = answered_by.provider_id
        elif info["role"] == "user":
            info["model"] = {"providerID": upcoming.provider_id or "", "modelID": upcoming.model_id}


class Pruner:
    """Prunes OpenAI Chat, OpenAI Responses and Anthropic message lists with one runtime.

    ``Pruner()`` reads the user's dcp.jsonc files (it never creates one) and records statistics
    in the plugin's database when the user has one (the OpenCode plugin made it); pass a
    :class:`~dcp_plugin.host.runtime.Runtime` of your own to choose otherwise (``store=USER_STORE``
    to keep statistics anyway; tests and what-ifs use one without a store).

    ``max_sessions`` and ``idle_seconds`` bound the sessions held (see :mod:`dcp_plugin.host.idle`);
    ``edits_in_place=False`` is for a host that never changes an item it passed in place (it
    replaces items instead): the pruner then skips the copy it otherwise compares the history with.
    """

    def __init__(
        self,
        runtime: Runtime | None = None,
        *,
        directory: str | os.PathLike[str] | None = None,
        notify: Notify | None = None,
        max_sessions: int = MAX_SESSIONS,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        edits_in_place: bool = True,
    ) -> None:
        if runtime is None:
            from dcp_plugin.host.persistence import user_store_if_kept

            runtime = Runtime(
                directory, store=user_store_if_kept(), max_sessions=max_sessions, idle_seconds=idle_seconds, clock=clock
            )
            runtime.startup(HostStartup(str(directory) if directory else None, notify=notify))
        self.runtime = runtime
        # True: the host may change an item it passed before in place, so a copy of what was read
        # is kept and compared (one step per container entry of the history, per request). False:
        # the host replaces items it changes; the items themselves are kept and compared, which
        # costs nothing for the items passed again as the same objects.
        self._keep = _as_read if edits_in_place else _same
        self._sessions: dict[str, _Session] = {}
        self._media: dict[str, MediaRemoved] = {}
        self._lock = threading.RLock()
        # Views are let go of like the runtime's sessions: idle ones, and the least recently used
        # beyond the cap (a view holds a copy of the containers of every item it read).
        self._lru = SessionLru(max_sessions, idle_seconds, clock)

    # -- one entry point per format ---------------------------------------------------------
    def openai_chat(
        self, messages: list[Item], *, session_id: str, model: str | None = None, usage: Any = None
    ) -> list[Item]:
        """The Chat Completions ``messages`` to send, pruned.

        ``usage``: the previous response (or its ``usage``); its assistant message is the newest
        one added since the previous call. The context figure then rests on the provider's count.
        """
        return self.prune(OPENAI_CHAT, messages, session_id=session_id, model=model, usage=usage)

    def openai_responses(
        self, items: list[Item], *, session_id: str, model: str | None = None, usage: Any = None
    ) -> list[Item]:
        """The Responses ``input`` items to send, pruned; ``usage`` as for :meth:`openai_chat`."""
        return self.prune(OPENAI_RESPONSES, items, session_id=session_id, model=model, usage=usage)

    def anthropic(
        self,
        messages: list[Item],
        *,
        session_id: str,
        system: Any = None,
        model: str | None = None,
        usage: Any = None,
    ) -> list[Item]:
        """The Messages API ``messages`` to send, pruned; ``system`` is read (for the budget), never changed.

        ``usage`` as for :meth:`openai_chat` (Anthropic's ``input_tokens`` plus its cache counts).
        """
        return self.prune(with_system(system), messages, session_id=session_id, model=model, usage=usage)

    # -- the shared flow ---------------------------------------------------------------------
    def prune(
        self,
        adapter: Adapter,
        items: list[Item],
        *,
        session_id: str,
        model: str | None = None,
        provider: str | None = None,
        usage: Any = None,
    ) -> list[Item]:
        """Prune ``items`` through ``adapter``: view, runtime, placeholders, back to the format; never raises.

        ``usage``: the provider's usage of the previous response (see :func:`~dcp_plugin.adapters.formats.usage.usage_tokens`).
        """
        if not isinstance(items, list) or not items:
            return items
        with self._lock:
            try:
                ref = ModelRef(provider or adapter.provider or None, model)
                session = self._session(adapter, items, session_id, ref, usage_tokens(usage) if usage is not None else None)
                view = session.builder.view
                outgoing = self.runtime.prepare(session_id, view.history(), model=ref, since=session.token)
                if outgoing is None:
                    return items
                result = self._write(adapter, session, items, outgoing)
                per_image = self.runtime.config().context_budget.image_token_estimate
                self._media[session_id] = MediaRemoved(session.media, session.media * per_image)
            except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
                self._sessions.pop(session_id, None)
                log.exception("dcp: pruning %s messages failed; the request is sent unchanged", adapter.name)
                return items
            idle = self._lru.to_drop(session_id)
        self.runtime.finish(outgoing, view.history())
        for other in idle:
            self.forget(other)
        return result

    def _session(
        self, adapter: Adapter, items: Sequence[object], session_id: str, model: ModelRef, tokens: dict[str, Any] | None = None
    ) -> _Session:
        """The session's view, fed with the items added since the last request (or read anew).

        ``tokens``: the provider's count for the previous request, kept on the response to it (the
        newest assistant message added now) unless that message carries its own.
        """
        session = self._sessions.get(session_id)
        seen = len(session.items) if session is not None else 0
        if (
            session is None
            or session.adapter != adapter.name
            or session.key != adapter.key
            or len(items) < seen
            or items[:seen] != session.items  # what was read, compared with the items now (an edit in place too)
        ):
            # The history may have been rewritten (an undo, an edit, another conversation under the
            # same id): the runtime's own check sees only message ids, which an edit keeps.
            self.runtime.reset(session_id)
            session = _Session(adapter.name, adapter.key, [], adapter.start(session_id), format=adapter)
            self._sessions[session_id] = session
            seen = 0
        messages = session.builder.view.messages
        known = len(messages)
        adapter.feed(session.builder, items, seen)
        session.items.extend(map(self._keep, items[seen:]))
        self._lru.touch(session_id)
        if tokens is not None:
            answered = [m for m in messages[known:] if m["info"]["role"] == "assistant"]
            if answered and "tokens" not in answered[-1]["info"]:
                answered[-1]["info"]["tokens"] = tokens
        if model.model_id is not None:
            _name_models(messages[known:], session.model or model, model)
            session.model = model
        return session

    def _write(self, adapter: Adapter, session: _Session, items: list[Item], outgoing: Outgoing) -> list[Item]:
        """The provider list with every decision in force written; only items with new decisions are rebuilt.

        The runtime hands over only the decisions made since the session's token (or all of
        them when it started over); items rebuilt before are reused. The value a decision
        writes is its ``value``, exactly what ``patches.apply`` would write into the view.
        """
        view = session.builder.view
        if not outgoing.incremental:
            session.rebuilt = {}
            session.media = 0
        dirty: set[int] = set()
        for decision in outgoing.patches.decisions:
            index = item_of(view, decision)
            if index is None:
                continue
            done = session.rebuilt.get(index)
            if done is None:
                session.rebuilt[index] = done = _Rebuilt([], None, 0)
            done.decisions.append(decision)
            dirty.add(index)
        for index in dirty:
            done = session.rebuilt[index]
            # A decision a later one replaced (a cut, then the whole output) no longer applies.
            done.decisions = [d for d in done.decisions if not d.superseded]
            edits = edits_of(view, done.decisions)
            session.media -= done.media
            done.media = sum(len(e.site.media) for e in edits if e.field == "output" and e.whole)
            session.media += done.media
            done.item = adapter.rebuild(items[index], edits)
        session.token = outgoing.token
        result = list(items)
        for index, done in session.rebuilt.items():
            result[index] = done.item
        return result

    # -- the rest of the runtime, in this format ---------------------------------------------
    def media_removed(self, session_id: str) -> MediaRemoved:
        """What the session's latest request no longer carries in media."""
        return self._media.get(session_id, MediaRemoved())

    def view(self, adapter: Adapter | str, items: Sequence[object], *, session_id: str = "default") -> View:
        """The OpenCode-shaped view the pipeline sees of ``items`` (for commands, replays and tests)."""
        chosen = FORMATS[adapter] if isinstance(adapter, str) else adapter
        return chosen.to_view(items, session_id)

    def session_ids(self) -> list[str]:
        """The sessions whose view this pruner holds, least recently used first."""
        with self._lock:
            return [sid for sid in self._lru.held() if sid in self._sessions]

    def forget(self, session_id: str) -> None:
        """Drop a session: its view here, and its state in the runtime (its statistics stay stored).

        Idle sessions are dropped anyway (see ``max_sessions`` and ``idle_seconds``); a host that
        knows a conversation is over frees its memory at once with this.
        """
        with self._lock:
            self._sessions.pop(session_id, None)
            self._media.pop(session_id, None)
            self._lru.forget(session_id)
        self.runtime.drop(session_id)

    def command(
        self,
        arguments: str,
        *,
        session_id: str,
        messages: Sequence[object] | None = None,
        format: Adapter | str | None = None,
        model: str | None = None,
    ) -> str | None:
        """The reply to ``/dcp <arguments>`` for a session (the messages as the host would send them); None when off.

        A session this pruner has pruned is read as it was pruned: with its format and model, and
        the same view, so what was sent shows as written. ``format`` is needed only for messages of
        a session it has not seen (``"openai_chat"``, ``"openai_responses"`` or ``"anthropic"``).
        """
        view: list[Any] | None = None
        with self._lock:
            known = self._sessions.get(session_id)
            chosen = FORMATS[format] if isinstance(format, str) else format
            if chosen is None and known is not None:
                chosen = known.format
            if messages and chosen is None:
                return (
                    f"dcp: /dcp {arguments}: say which format the messages are in: "
                    "Pruner.command(..., format='openai_chat' | 'openai_responses' | 'anthropic')."
                )
            named = model or (known.model.model_id if known is not None and known.model is not None else None)
            ref = ModelRef(chosen.provider or None if chosen is not None else None, named)
            try:
                if messages and chosen is not None:
                    # A list, as a request's: read as another sequence, it would never continue the session's.
                    view = self._session(chosen, list(messages), session_id, ref).builder.view.messages
                elif known is not None:
                    view = known.builder.view.messages
            except Exception:  # noqa: BLE001 - answer from what the runtime already knows
                self._sessions.pop(session_id, None)
                log.exception("dcp: could not read the messages for /dcp")
        # The host's own count of its messages (tool results are parts of a view message).
        items = len(messages) if messages else len(known.items) if known is not None else None
        return answer(self.runtime, COMMAND, arguments, session_id, view, ref if ref.model_id is not None else None, items=items)
