"""A host that offers the model the plugin's tools, with the dcp plugin registered through pluggy."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pluggy

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.ids import short_id
from tests.support.helpers import PROJECT, SESSION, assistant, call, make_config, tool_part, tool_parts, user

BIG = "line of a file that is long enough to be worth pruning\n" * 40
_calls = itertools.count(1)


class ToolsHost:
    """The stored history: a user message, then reads of ``files`` (one step each)."""

    def __init__(self, files: tuple[str, ...] = ("a.py", "a.py")) -> None:
        self.pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
        self.pm.add_hookspecs(dcp_plugin.host.hostspec)
        self.pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()))), name="dcp")
        self.pm.hook.tool_definitions()
        self.messages: list[dict[str, Any]] = [user()]
        self.ids: list[str] = []
        for name in files:
            message = call("read", {"filePath": f"{PROJECT}/{name}"}, output=BIG)
            self.messages.append(message)
            self.ids.append(short_id(tool_parts([message])[0]["callID"]))

    def request(self) -> list[dict[str, Any]]:
        sent = copy.deepcopy(self.messages)
        self.pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": sent})
        return sent

    def use(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The model calls a tool in a new step; the host stores the call and its result."""
        self.request()
        call_id = f"call_h{next(_calls):05d}"
        result = self.pm.hook.tool_execute(
            name=name, arguments=arguments, session_id=SESSION, messages=copy.deepcopy(self.messages), call_id=call_id
        )
        output = result["output"]
        part = (
            tool_part(name, arguments, status="error", error=output, call_id=call_id)
            if result["error"]
            else tool_part(name, arguments, output=output, call_id=call_id)
        )
        self.messages.append(assistant(part))
        return dict(result)
