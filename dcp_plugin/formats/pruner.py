"""One entry point per provider format: prune a message list right before it is sent.

A host builds one :class:`Pruner` per process (it holds the sessions, like any other host's
runtime) and calls the method for its format before every request; the returned list is what
it sends. The caller's list and its items are never modified: items the plugin rewrites are
new objects, every other item is passed back as the same object. Any failure inside the
plugin is logged and the caller's own list comes back (fail open).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dcp_plugin.formats import anthropic, openai_chat, openai_responses
from dcp_plugin.formats.view import Edit, View, edits_by_item, mark_removed, removed_media
from dcp_plugin.host.notifier import Notify
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.pipeline.conversation import ModelRef
from dcp_plugin.pipeline.placeholders import apply

log = logging.getLogger("dcp_plugin")


@dataclass(frozen=True, slots=True)
class Adapter:
    """A provider format: its name, its provider id, and its two directions."""

    name: str
    provider: str
    to_view: Callable[[Sequence[Any], str], View]
    rebuild: Callable[[Any, list[Edit]], Any]


OPENAI_CHAT = Adapter(openai_chat.NAME, openai_chat.PROVIDER, openai_chat.to_view, openai_chat.rebuild)
OPENAI_RESPONSES = Adapter(
    openai_responses.NAME, openai_responses.PROVIDER, openai_responses.to_view, openai_responses.rebuild
)
ANTHROPIC = Adapter(anthropic.NAME, anthropic.PROVIDER, anthropic.to_view, anthropic.rebuild)
FORMATS: dict[str, Adapter] = {a.name: a for a in (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC)}


@dataclass(frozen=True, slots=True)
class MediaRemoved:
    """Images and files a request no longer carries because their tool results were pruned."""

    count: int = 0
    tokens: int = 0  # counted with contextBudget.imageTokenEstimate each


class Pruner:
    """Prunes OpenAI Chat, OpenAI Responses and Anthropic message lists with one runtime.

    ``Pruner()`` reads the user's dcp.jsonc files and records statistics like every other
    host; pass a :class:`~dcp_plugin.host.runtime.Runtime` of your own to choose otherwise
    (tests and what-ifs use one without a store).
    """

    def __init__(
        self,
        runtime: Runtime | None = None,
        *,
        directory: str | os.PathLike[str] | None = None,
        notify: Notify | None = None,
    ) -> None:
        if runtime is None:
            from dcp_plugin.host.persistence import USER_STORE

            runtime = Runtime(directory, store=USER_STORE, create_global_config=True)
            context: dict[str, Any] = {"notify": notify}
            if directory is not None:
                context["directory"] = str(directory)
            runtime.startup(context)
        self.runtime = runtime
        self._media: dict[str, MediaRemoved] = {}

    # -- one entry point per format ---------------------------------------------------------
    def openai_chat(self, messages: list[Any], *, session_id: str, model: str | None = None) -> list[Any]:
        """The Chat Completions ``messages`` to send, pruned."""
        return self.prune(OPENAI_CHAT, messages, session_id=session_id, model=model)

    def openai_responses(self, items: list[Any], *, session_id: str, model: str | None = None) -> list[Any]:
        """The Responses ``input`` items to send, pruned."""
        return self.prune(OPENAI_RESPONSES, items, session_id=session_id, model=model)

    def anthropic(
        self, messages: list[Any], *, session_id: str, system: Any = None, model: str | None = None
    ) -> list[Any]:
        """The Messages API ``messages`` to send, pruned; ``system`` is read (for the budget), never changed."""
        adapter = Adapter(ANTHROPIC.name, ANTHROPIC.provider, functools.partial(anthropic.to_view, system=system), ANTHROPIC.rebuild)
        return self.prune(adapter, messages, session_id=session_id, model=model)

    # -- the shared flow ---------------------------------------------------------------------
    def prune(
        self,
        adapter: Adapter,
        items: list[Any],
        *,
        session_id: str,
        model: str | None = None,
        provider: str | None = None,
    ) -> list[Any]:
        """Prune ``items`` through ``adapter``: view, runtime, placeholders, back to the format; never raises."""
        try:
            if not isinstance(items, list) or not items:
                return items
            view = adapter.to_view(items, session_id)
            ref = ModelRef(provider or adapter.provider or None, model)
            outgoing = self.runtime.prepare(session_id, view.messages, model=ref)
            if outgoing is None:
                return items
            apply(outgoing.patches)
            edits = edits_by_item(view, outgoing.patches)
            result = list(items)
            for index, item_edits in edits.items():
                result[index] = adapter.rebuild(items[index], item_edits)
            media = removed_media(edits)
            mark_removed(media)
            per_image = self.runtime.config().context_budget.image_token_estimate
            self._media[session_id] = MediaRemoved(len(media), len(media) * per_image)
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp: pruning %s messages failed; the request is sent unchanged", adapter.name)
            return items
        self.runtime.finish(outgoing, view.messages)
        return result

    def media_removed(self, session_id: str) -> MediaRemoved:
        """What the session's latest request no longer carries in media."""
        return self._media.get(session_id, MediaRemoved())

    def view(self, adapter: Adapter | str, items: list[Any], *, session_id: str = "default") -> View:
        """The OpenCode-shaped view the pipeline sees of ``items`` (for commands, replays and tests)."""
        chosen = FORMATS[adapter] if isinstance(adapter, str) else adapter
        return chosen.to_view(items, session_id)

    def command(
        self,
        arguments: str,
        *,
        session_id: str,
        messages: list[Any] | None = None,
        format: Adapter | str = OPENAI_CHAT,
    ) -> str | None:
        """The reply to ``/dcp <arguments>`` for a session (the messages as the host would send them); None when off."""
        input: dict[str, Any] = {"command": "dcp", "arguments": arguments, "sessionID": session_id}
        if messages:
            try:
                input["messages"] = self.view(format, messages, session_id=session_id).messages
            except Exception:  # noqa: BLE001 - answer from what the runtime already knows
                log.exception("dcp: could not read the messages for /dcp")
        output: dict[str, Any] = {}
        self.runtime.command(input, output)
        if not output.get("handled"):
            return None
        return "\n".join(str(p.get("text", "")) for p in output.get("parts", []) if isinstance(p, dict))
