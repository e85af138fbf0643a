"""The plugin object a host registers: its hook implementations only wire the runtime."""

from __future__ import annotations

from typing import Any

from dcp_plugin.budget.tips import tip_text
from dcp_plugin.host.hostspec import hookimpl
from dcp_plugin.host.persistence import user_store_if_kept
from dcp_plugin.host.runtime import Runtime


class DcpPlugin:
    """The dcp hook implementations over one :class:`Runtime`.

    A host process loads one from the ``agent_host`` entry point (:data:`plugin`); replays,
    benchmarks and tests build their own, usually around a runtime that saves nothing.
    """

    def __init__(self, runtime: Runtime | None = None) -> None:
        self.runtime = runtime if runtime is not None else Runtime(store=user_store_if_kept())

    @hookimpl
    def host_startup(self, context: dict[str, Any]) -> None:
        """Adopt the host's project directory and capabilities."""
        self.runtime.startup(context)

    @hookimpl
    def chat_messages_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Prune obsolete tool content from the outgoing messages, in place."""
        self.runtime.transform(input, output)

    @hookimpl
    def command_execute_before(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Answer `/dcp ...` commands."""
        self.runtime.command(input, output)

    @hookimpl
    def tool_definitions(self) -> list[dict[str, Any]]:
        """The discard, extract and restore tools the config turns on."""
        return self.runtime.tool_definitions()

    @hookimpl
    def tool_execute(
        self, name: str, arguments: dict[str, Any], session_id: str, messages: list[dict[str, Any]], call_id: str | None
    ) -> dict[str, Any] | None:
        """Run a call of one of the plugin's tools; None for other tools."""
        result = self.runtime.execute_tool(session_id, name, arguments, messages or [], call_id=call_id)
        return None if result is None else result.to_dict()

    @hookimpl
    def system_prompt_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Add what the tools are for to the system prompt, while they are offered."""
        self.runtime.system_transform(input, output)

    @hookimpl
    def context_snapshot(self, session_id: str) -> dict[str, Any] | None:
        """The session's latest context snapshot, with the tip's text."""
        snapshot = self.runtime.snapshot(session_id)
        if snapshot is None:
            return None
        data = snapshot.to_dict()
        data["tip_text"] = (
            tip_text(snapshot.tip, snapshot.estimated_input_tokens, snapshot.context_limit) if snapshot.tip else None
        )
        return data

    @hookimpl
    def compaction_advice(self, session_id: str, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
        """Run the compaction controller for the session's latest snapshot."""
        outcome = self.runtime.compaction_advice(session_id, messages)
        if outcome is None:
            return None
        return {
            "status": str(outcome.status),
            "tokens": outcome.tokens,
            "forced": outcome.forced,
            "summary": outcome.summary,
            "consecutive_failures": outcome.consecutive_failures,
            "error": outcome.error,
        }


# What the `agent_host` entry point names: the instance a host process registers.
plugin = DcpPlugin()
