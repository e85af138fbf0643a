"""A LangChain agent middleware that prunes every model request (``pip install 'dcp-plugin[langchain]'``).

For agents built with ``langchain.agents.create_agent``::

    from dcp_plugin.adapters.formats import Pruner
    from dcp_plugin.adapters.formats.langchain_middleware import DcpMiddleware

    agent = create_agent(model, tools, middleware=[DcpMiddleware(Pruner())], checkpointer=...)

Only the request handed to the model is pruned (``wrap_model_call``): the graph state, and
so the checkpointed history, keep every message as it was. The session is the thread id
(``config["configurable"]["thread_id"]``); without one (an agent without a checkpointer), the
conversation's first user message (its id, which LangGraph gives every message, else its text).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from dcp_plugin.adapters.formats.adapter import LANGCHAIN
from dcp_plugin.adapters.formats.items import text_blocks
from dcp_plugin.adapters.formats.pruner import Pruner
from dcp_plugin.adapters.formats.view import digest

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "dcp_plugin.adapters.formats.langchain_middleware needs LangChain: pip install 'dcp-plugin[langchain]'"
    ) from exc

log = logging.getLogger("dcp_plugin")

DEFAULT_SESSION = "langchain"


def conversation_id(messages: Any) -> str:
    """A session id for a conversation without a thread id: a digest of its first user message.

    Its id when it has one (LangGraph gives every message in its state a unique id), else its
    text. Two conversations that start with the same text and no ids get the same session; the
    pruner then sees each switch between them as a rewritten history and starts over, so they
    still never share a decision (they only lose the incremental path).
    """
    for message in messages if isinstance(messages, list) else ():
        if getattr(message, "type", None) != "human":
            continue
        ident = getattr(message, "id", None)
        if isinstance(ident, str) and ident:
            return f"{DEFAULT_SESSION}-{digest('id', ident)}"
        return f"{DEFAULT_SESSION}-{digest('text', text_blocks(getattr(message, 'content', None)))}"
    return DEFAULT_SESSION


def thread_id(request: Any) -> str:
    """The request's LangGraph thread id, the session it belongs to; without one, :func:`conversation_id`."""
    info = getattr(getattr(request, "runtime", None), "execution_info", None)
    value = getattr(info, "thread_id", None)
    if not value:
        try:
            from langgraph.config import get_config

            value = (get_config().get("configurable") or {}).get("thread_id")
        except Exception:  # noqa: BLE001 - outside a graph run there is no config
            value = None
    return str(value) if value else conversation_id(getattr(request, "messages", None))


def model_id(model: Any) -> str | None:
    """The model id a LangChain chat model names (``model_name`` or ``model``), if any."""
    for attribute in ("model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


class DcpMiddleware(AgentMiddleware):
    """Prunes obsolete tool content from each model request of an agent; never changes the graph state."""

    def __init__(self, pruner: Pruner | None = None) -> None:
        super().__init__()
        self.pruner = pruner if pruner is not None else Pruner()

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Send the pruned request."""
        return handler(self.pruned(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Send the pruned request (async agents)."""
        return await handler(self.pruned(request))

    def pruned(self, request: ModelRequest) -> ModelRequest:
        """The request with pruned messages; the same request when nothing changed or on any failure."""
        try:
            messages = self.pruner.prune(
                LANGCHAIN, request.messages, session_id=thread_id(request), model=model_id(request.model)
            )
            if messages is request.messages or all(a is b for a, b in zip(messages, request.messages, strict=True)):
                return request
            return request.override(messages=messages)
        except Exception:  # noqa: BLE001 - fail open: the model gets the request as it was
            log.exception("dcp: pruning the LangChain request failed; it is sent unchanged")
            return request
