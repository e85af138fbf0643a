"""The plugin object a host registers: its hook implementations read the hook shapes and call the runtime.

The shapes of :mod:`~dcp_plugin.host.hostspec` (``input``/``output`` dicts, lists changed in
place) are read and written here and nowhere else; the runtime and the command layer take and
return plain values.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from dcp_plugin.budget.tips import tip_text
from dcp_plugin.commands.dispatch import answer
from dcp_plugin.host.hostspec import HostStartup, hookimpl
from dcp_plugin.host.persistence import user_store_if_kept
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.messages import Message, session_id_of
from dcp_plugin.model.refs import model_ref

log = logging.getLogger("dcp_plugin")


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
        if isinstance(context, Mapping):
            self.runtime.startup(HostStartup.read(context))

    @hookimpl
    def chat_messages_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Prune obsolete tool content from ``output["messages"]`` in place, or leave it untouched."""
        try:
            messages = output.get("messages") if isinstance(output, Mapping) else None
            if not isinstance(messages, list) or not messages:
                return
            hook_input = input if isinstance(input, Mapping) else {}
            session_id = session_id_of(hook_input, messages)
            model = model_ref(hook_input.get("model"))
            continuity = unchanged_claim(hook_input.get("unchangedBefore"), len(messages))
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp: could not read the transform hook's input; the request is sent unchanged")
            return
        self.runtime.prune(session_id, messages, model=model, continuity=continuity)

    @hookimpl
    def command_execute_before(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Answer `/dcp ...` with one text part appended to ``output["parts"]``; other commands are left alone."""
        if not isinstance(input, Mapping) or not isinstance(output, dict):
            return
        name = input.get("command")
        if not isinstance(name, str):
            return
        arguments = input.get("arguments")
        raw = input.get("messages")
        messages = raw if isinstance(raw, list) and raw else None
        text = answer(
            self.runtime,
            name,
            arguments if isinstance(arguments, str) else "",
            session_id_of(input, messages or []),
            messages,
            model_ref(input.get("model")),
        )
        if text is None:
            return
        output["handled"] = True
        parts = output.get("parts")
        if not isinstance(parts, list):
            parts = output["parts"] = []
        parts.append({"type": "text", "text": text})

    @hookimpl
    def tool_definitions(self) -> list[dict[str, Any]]:
        """The discard, extract and restore tools the config turns on."""
        return self.runtime.tool_definitions()

    @hookimpl
    def tool_execute(
        self, name: str, arguments: dict[str, Any], session_id: str, messages: list[Message], call_id: str | None
    ) -> dict[str, Any] | None:
        """Run a call of one of the plugin's tools; None for other tools."""
        result = self.runtime.execute_tool(session_id, name, arguments, messages or [], call_id=call_id)
        return None if result is None else result.to_dict()

    @hookimpl
    def system_prompt_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Append what the tools are for to ``output["system"]`` (a list of strings), while they are offered."""
        try:
            system = output.get("system") if isinstance(output, Mapping) else None
            text = self.runtime.system_text() if isinstance(system, list) else None
            if text is not None and isinstance(system, list) and text not in system:
                system.append(text)
        except Exception:  # noqa: BLE001 - the request goes out without the text
            log.exception("dcp: could not add to the system prompt")

    @hookimpl
    def context_snapshot(self, session_id: str) -> dict[str, Any] | None:
        """The session's latest context snapshot, with the tip's text; None for an id that names no session."""
        if not _names_a_session("context_snapshot", session_id):
            return None
        try:
            snapshot = self.runtime.snapshot(session_id)
            if snapshot is None:
                return None
            data = snapshot.to_dict()
            data["tip_text"] = (
                tip_text(snapshot.tip, snapshot.estimated_input_tokens, snapshot.context_limit) if snapshot.tip else None
            )
        except Exception:  # noqa: BLE001 - a hook that shows the budget must never break the host
            log.exception("dcp: context_snapshot failed")
            return None
        return data

    @hookimpl
    def compaction_advice(self, session_id: str, messages: list[Message]) -> dict[str, Any] | None:
        """Run the compaction controller for the session's latest snapshot."""
        if not _names_a_session("compaction_advice", session_id):
            return None
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


def unchanged_claim(value: object, count: int) -> Continuity | None:
    """The host's ``unchangedBefore`` as a claim (its word on an unchanged prefix); None when absent, or (with a warning) when not usable."""
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= count:
        log.warning(
            "dcp: chat_messages_transform input 'unchangedBefore' must be a whole number from 0 to the number "
            "of messages sent (%d), got %r; it is ignored and every placeholder is checked", count, value
        )
        return None
    return Continuity.unchanged_before(value)


def _names_a_session(hook: str, session_id: object) -> bool:
    """Whether a hook's ``session_id`` can name a session (a non-empty string); says so in the log when not."""
    if isinstance(session_id, str) and session_id:
        return True
    log.warning("dcp: %s needs a session id (a non-empty string), not %s", hook, type(session_id).__name__)
    return False


# What the `agent_host` entry point names: the instance a host process registers.
plugin = DcpPlugin()
