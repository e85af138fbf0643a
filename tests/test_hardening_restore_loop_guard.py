"""N14: restore has a loop guard: an output is restored at most once per user turn."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pluggy
from helpers import PROJECT, SESSION, assistant, call, make_config, tool_part, tool_parts, user

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.ids import short_id

BIG = "line of a file that is long enough to be worth pruning\n" * 40
_calls = itertools.count(1)


class Host:
    """A host offering the plugin's tools to the model, through pluggy."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
        self.pm.add_hookspecs(dcp_plugin.host.hostspec)
        self.pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()))), name="dcp")
        self.pm.hook.tool_definitions()
        older = call("read", {"filePath": f"{PROJECT}/a.py"}, output=BIG)
        self.messages: list[dict[str, Any]] = [user(), older, call("read", {"filePath": f"{PROJECT}/a.py"}, output=BIG)]
        self.pruned_id = short_id(tool_parts([older])[0]["callID"])

    def request(self) -> None:
        self.pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": copy.deepcopy(self.messages)})

    def restore(self) -> dict[str, Any]:
        """The model calls restore on the pruned output in a new step; the host stores the call and its result."""
        self.request()
        call_id = f"call_r{next(_calls):05d}"
        arguments = {"ids": [self.pruned_id]}
        result = self.pm.hook.tool_execute(
            name="restore", arguments=arguments, session_id=SESSION, messages=copy.deepcopy(self.messages), call_id=call_id
        )
        output = result["output"]
        part = (
            tool_part("restore", arguments, status="error", error=output, call_id=call_id)
            if result["error"]
            else tool_part("restore", arguments, output=output, call_id=call_id)
        )
        self.messages.append(assistant(part))
        return dict(result)


def test_a_second_restore_of_one_output_in_the_same_turn_is_refused() -> None:
    host = Host()
    first = host.restore()
    second = host.restore()
    assert first["error"] is False and BIG in first["output"]
    assert second["error"] is True and "already restored" in second["output"] and BIG not in second["output"]


def test_thirty_restores_of_one_output_in_a_turn_bring_its_content_back_once() -> None:
    host = Host()
    results = [host.restore() for _ in range(30)]
    assert sum(BIG in r["output"] for r in results) == 1


def test_the_output_can_be_restored_again_in_a_later_user_turn() -> None:
    host = Host()
    host.restore()
    host.messages.append(user("go on"))
    assert host.restore()["error"] is False
