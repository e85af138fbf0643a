"""The model-tools service: the plugin's tools (discard, extract, restore) offered to the model, and a call's verdict."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.results import ToolResult
from dcp_plugin.model.messages import Message, call_message
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.pipeline.modeltools import NAMES as TOOL_NAMES
from dcp_plugin.pipeline.modeltools import definitions, system_text
from dcp_plugin.pipeline.session import SessionState

log = logging.getLogger("dcp_plugin")

# Opens a session for a call (made on first sight, held locked while the call is judged).
OpenSession = Callable[[DcpConfig], AbstractContextManager[SessionState]]


class ToolService:
    """Whether the host offers the tools (it asked for their definitions), and the answers to their calls."""

    def __init__(self, config: Callable[[], DcpConfig]) -> None:
        self._config = config
        self.offered = False  # the host asked for the tool definitions: it offers them to the model

    def definitions(self) -> list[dict[str, Any]]:
        """The tools to offer the model (``{name, description, parameters}``); asking says the host offers them."""
        config = self._config()
        # Each session learns of it the next time it is locked: none waits for another.
        self.offered = True
        return definitions(config.tools) if config.enabled else []

    def system_text(self) -> str | None:
        """What to add to the system prompt while the tools are offered: the same text on every request."""
        config = self._config()
        if not (config.enabled and self.offered):
            return None
        return system_text(config.tools)

    def execute(
        self,
        name: str,
        arguments: object,
        messages: Sequence[Message],
        call_id: str | None,
        open_session: OpenSession,
        host_model: ModelRef,
    ) -> ToolResult | None:
        """Run a call of discard, extract or restore on the history before it; None for another tool. Never raises."""
        if name not in TOOL_NAMES:
            return None
        try:
            config = self._config()
            if not config.enabled:
                return ToolResult("dcp is turned off (enabled: false in dcp.jsonc); nothing was changed.", True, f"{name}: off")
            if not self.offered:
                self.definitions()
            # The message holding the call (searched from the end) is left out, else the whole list is read.
            found = call_message(messages, call_id) if call_id else None
            cut = len(messages) if found is None else found
            with open_session(config) as state:
                if cut >= state.messages_seen:
                    state.update(messages[:cut], request=True, model=host_model)
                verdict = state.judge_call(messages[:cut], name, arguments, call_id or "")
            return ToolResult(verdict.text, not verdict.accepted, verdict.title)
        except Exception as exc:  # noqa: BLE001 - the model gets an answer, the host keeps going
            log.exception("dcp: the %s tool failed", name)
            return ToolResult(f"dcp: {name} failed inside the plugin ({type(exc).__name__}); nothing was changed.", True, f"{name}: failed")
