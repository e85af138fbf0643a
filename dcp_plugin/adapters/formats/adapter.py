"""The provider formats the plugin reads, each an :class:`Adapter`: reading items into a view, rebuilding one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dcp_plugin.adapters.formats import anthropic, langchain_messages, openai_chat, openai_responses
from dcp_plugin.adapters.formats.view import ItemEdit, View, ViewBuilder


@dataclass(frozen=True, slots=True)
class Adapter:
    """A provider format: its name, provider id, how to read items into a view and how to rebuild one.

    ``begin`` starts a view with what the request carries besides its items (Anthropic's
    ``system``), and ``key`` is that value: a different key means a different view.
    """

    name: str
    provider: str
    feed: Callable[[ViewBuilder, Sequence[Any], int], None]
    rebuild: Callable[[Any, list[ItemEdit]], Any]
    begin: Callable[[ViewBuilder], None] | None = None
    key: Any = None

    def start(self, session_id: str) -> ViewBuilder:
        """An empty view builder for this format."""
        builder = ViewBuilder(session_id)
        if self.begin is not None:
            self.begin(builder)
        return builder

    def to_view(self, items: Sequence[object], session_id: str) -> View:
        """The whole view of ``items``."""
        builder = self.start(session_id)
        self.feed(builder, items, 0)
        return builder.view


def _adapter(module: Any) -> Adapter:
    return Adapter(module.NAME, module.PROVIDER, module.feed, module.rebuild)


OPENAI_CHAT = _adapter(openai_chat)
OPENAI_RESPONSES = _adapter(openai_responses)
ANTHROPIC = _adapter(anthropic)
LANGCHAIN = _adapter(langchain_messages)
FORMATS: dict[str, Adapter] = {a.name: a for a in (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, LANGCHAIN)}


def with_system(system: Any) -> Adapter:
    """The Anthropic adapter for a request with this ``system`` prompt."""
    if system is None:
        return ANTHROPIC
    return Adapter(ANTHROPIC.name, ANTHROPIC.provider, ANTHROPIC.feed, ANTHROPIC.rebuild,
                   lambda builder: anthropic.begin(builder, system), system)
