"""N1/N2: what the host cleared, nulled or changed since a decision was made is sent as the host holds it now."""

from __future__ import annotations

import copy
from typing import Any

import pluggy

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.modeltools.texts import LIST_HEAD
from tests.support.bridge_helpers import Harness, transform_request
from tests.support.helpers import PROJECT, SESSION, call, make_config, tool_parts, user

CLEARED = "[Old tool result content cleared]"  # what OpenCode sends for an output it compacted
BIG = "line of a file that is long enough to be worth pruning\n" * 40


class PluggyHost:
    """A host with the dcp plugin registered through pluggy; sends a fresh copy of its history each request."""

    def __init__(self, **config: Any) -> None:
        runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
        self.pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
        self.pm.add_hookspecs(dcp_plugin.host.hostspec)
        self.pm.register(dcp_plugin.DcpPlugin(runtime), name="dcp")
        self.pm.hook.tool_definitions()  # the host offers the model the plugin's tools
        self.messages: list[dict[str, Any]] = [user()]

    def request(self) -> list[dict[str, Any]]:
        out = copy.deepcopy(self.messages)
        self.pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": out})
        return out

    def read(self, path: str, output: str = BIG) -> dict[str, Any]:
        message = call("read", {"filePath": f"{PROJECT}/{path}"}, output=output)
        self.messages.append(message)
        return message


def state(message: dict[str, Any]) -> dict[str, Any]:
    [part] = tool_parts([message])
    result: dict[str, Any] = part["state"]
    return result


def sent_output(sent: list[dict[str, Any]], message: dict[str, Any]) -> Any:
    [part] = [p for p in tool_parts(sent) if p["id"] == tool_parts([message])[0]["id"]]
    return part["state"].get("output")


def clear(message: dict[str, Any]) -> None:
    """What OpenCode's compaction does to an old output."""
    state(message)["output"] = CLEARED
    state(message)["time"] = {"start": 1, "end": 2, "compacted": 1700000000000}


def host_with_list() -> tuple[PluggyHost, dict[str, Any]]:
    host = PluggyHost(tools={"nudgeFrequency": 3})
    for n in range(2):
        host.read(f"f{n}.py", BIG + str(n))
        host.request()
    carrier = host.read("f2.py", BIG + "2")
    assert LIST_HEAD in sent_output(host.request(), carrier)
    return host, carrier


def test_an_output_carrying_the_list_that_the_host_cleared_is_sent_cleared() -> None:
    host, carrier = host_with_list()
    clear(carrier)
    host.read("f3.py")
    assert sent_output(host.request(), carrier) == CLEARED


def test_an_output_carrying_the_list_that_the_host_replaced_is_sent_as_replaced() -> None:
    host, carrier = host_with_list()
    replaced = "short new output"
    state(carrier)["output"] = replaced
    assert sent_output(host.request(), carrier) == replaced


def test_an_output_carrying_the_list_replaced_by_as_long_a_text_keeps_none_of_the_old_text() -> None:
    host, carrier = host_with_list()
    new = "N" * len(state(carrier)["output"])
    state(carrier)["output"] = new
    sent = sent_output(host.request(), carrier)
    assert sent.startswith(new) and "line of a file" not in sent


def duplicate_host() -> tuple[PluggyHost, dict[str, Any]]:
    host = PluggyHost()
    older = host.read("a.py")
    host.read("a.py")
    assert sent_output(host.request(), older).startswith("[dcp:")
    return host, older


def test_a_pruned_output_the_host_cleared_does_not_become_the_longer_placeholder() -> None:
    host, older = duplicate_host()
    clear(older)
    assert sent_output(host.request(), older) == CLEARED


def test_a_pruned_output_the_host_nulled_stays_null() -> None:
    host, older = duplicate_host()
    state(older)["output"] = None
    assert sent_output(host.request(), older) is None


def test_a_pruned_output_the_host_shrank_below_the_placeholder_is_sent_as_shrunk() -> None:
    host, older = duplicate_host()
    state(older)["output"] = "tiny"
    assert sent_output(host.request(), older) == "tiny"


# -- through the bridge: the shim resends a message the host changed, and keeps patches by token --


def test_a_bridge_reply_after_the_host_cleared_a_pruned_output_drops_its_kept_patch() -> None:
    messages = [user(), call("read", {"filePath": f"{PROJECT}/a.py"}, output=BIG)]
    messages.append(call("read", {"filePath": f"{PROJECT}/a.py"}, output=BIG))
    h = Harness()
    first = h.transform(SESSION, messages)
    older = tool_parts([messages[1]])[0]["id"]
    assert [p["partID"] for p in first["patches"]] == [older]
    clear(messages[1])
    request = {**transform_request(h.rid(), SESSION, messages, base=1), "patchToken": first["patchToken"]}
    reply = h.send(request)
    assert (reply.get("incremental", False), reply["patches"]) == (False, [])
