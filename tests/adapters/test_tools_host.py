"""The host contract for the tools (pluggy hooks and the bridge ops), and what /dcp reports of them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pluggy
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.adapters.pluggy_host import DcpPlugin
from dcp_plugin.host import hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.modeltools import system_text
from dcp_plugin.pipeline.modeltools.texts import LIST_HEAD
from dcp_plugin.store import Store
from tests.support.bridge_helpers import Harness, transform_request
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    call,
    hook_command,
    hook_transform,
    make_config,
    tool_part,
    user,
)
from tests.support.tools_helpers import BIG, ToolHost, ident, lists


def pluggy_host(**config: Any) -> tuple[pluggy.PluginManager, Runtime]:
    pm = pluggy.PluginManager(hostspec.PROJECT_NAME)
    pm.add_hookspecs(hostspec)
    runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
    pm.register(DcpPlugin(runtime), name="dcp")
    pm.hook.host_startup(context={"directory": PROJECT, "persist": False})
    return pm, runtime


# -- pluggy hooks -----------------------------------------------------------------------------


def test_the_plugin_offers_the_tools_the_config_turns_on_with_json_schema_parameters() -> None:
    pm, _ = pluggy_host(tools={"extract": {"enabled": False}})
    [offered] = pm.hook.tool_definitions()
    assert [t["name"] for t in offered] == ["discard", "restore"]
    discard = offered[0]["parameters"]
    assert discard["required"] == ["ids", "reason"] and discard["properties"]["reason"]["enum"] == ["noise", "done"]


def test_a_disabled_plugin_offers_no_tools() -> None:
    pm, _ = pluggy_host(enabled=False)
    assert pm.hook.tool_definitions() == [[]]


def test_tool_execute_answers_the_plugins_tools_and_leaves_others_to_other_plugins() -> None:
    pm, _ = pluggy_host()
    pm.hook.tool_definitions()
    messages = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    answer = pm.hook.tool_execute(name="restore", arguments={"ids": ["zzzz"]}, session_id=SESSION, messages=messages, call_id="c9")
    assert answer["error"] is True and answer["output"].startswith("Refused:") and answer["title"] == "restore: refused"
    assert pm.hook.tool_execute(name="bash", arguments={}, session_id=SESSION, messages=messages, call_id=None) is None


def test_the_system_text_is_added_once_the_tools_are_offered_and_is_the_same_every_time() -> None:
    pm, _ = pluggy_host()
    before = {"system": ["You are an agent."]}
    pm.hook.system_prompt_transform(input={"sessionID": SESSION}, output=before)
    assert before["system"] == ["You are an agent."]
    pm.hook.tool_definitions()
    texts = []
    for _ in range(2):
        output = {"system": ["You are an agent."]}
        pm.hook.system_prompt_transform(input={"sessionID": SESSION}, output=output)
        texts.append(output["system"][-1])
    assert texts[0] == texts[1] == system_text(make_config().tools)
    assert texts[0].startswith("[dcp: instructions]") and "never by the user" in texts[0]


def test_the_system_text_names_only_the_tools_that_are_on() -> None:
    text = system_text(make_config(tools={"restore": {"enabled": False}}).tools)
    assert text is not None and "- discard(" in text and "- restore(" not in text
    assert system_text(make_config(tools={n: {"enabled": False} for n in ("discard", "extract", "restore")}).tools) is None


def test_a_host_that_never_calls_the_new_hooks_sends_what_it_sent_before() -> None:
    offered, plain = ToolHost.start(tools={"nudgeFrequency": 1}).add(user()), ToolHost.start(offered=False)
    for n in range(5):
        offered.read(f"f{n}.py", BIG)
        offered.read("same.py", BIG)
    plain.add(*copy.deepcopy(offered.messages))
    for host in (offered, plain):
        host.request()
    assert lists(offered.sent[-1]) and not lists(plain.sent[-1])
    without_lists = [o.split("\n\n" + LIST_HEAD)[0] if isinstance(o, str) else o for o in offered.outputs()]
    assert without_lists == plain.outputs()


def test_offering_the_tools_mid_session_derives_the_session_anew() -> None:
    host = ToolHost.start(offered=False, tools={"nudgeFrequency": 2}).add(user())
    for n in range(4):
        host.read(f"f{n}.py", BIG)
    host.request()
    host.runtime.tool_definitions()
    assert lists(host.request())
    assert host.runtime.view(SESSION).restarts == 1


@settings(max_examples=60, deadline=None)
@given(arguments=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8), lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(["ids", "reason", "distillation", "x"]), c, max_size=3), max_leaves=8),
       name=st.sampled_from(["discard", "extract", "restore"]))
def test_any_arguments_get_an_answer_and_never_an_exception(arguments: Any, name: str) -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.tool_definitions()
    messages = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    result = runtime.execute_tool(SESSION, name, arguments, messages, call_id="c1")
    assert result is not None and isinstance(result.output, str) and result.output


# -- the bridge ---------------------------------------------------------------------------------


def test_the_bridge_answers_the_tools_and_the_system_text() -> None:
    reply = Harness().send({"id": 3, "op": "tools"})
    assert reply["ok"] is True and [t["name"] for t in reply["tools"]] == ["discard", "extract", "restore"]
    assert reply["system"] == system_text(make_config().tools)


def test_the_bridge_runs_a_call_of_a_tool_against_the_session_it_holds() -> None:
    h = Harness()
    h.send({"id": 2, "op": "tools"})
    messages = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/b.py"}, output=BIG)]
    h.transform(SESSION, messages)
    reply = h.send({"id": 9, "op": "tool", "sessionID": SESSION, "name": "discard", "callID": "c_d",
                    "arguments": {"ids": [ident(messages[1])], "reason": "done"}})
    assert reply["ok"] is True and reply["error"] is False and reply["output"].startswith("Discarded 1 output")


def test_a_tool_call_for_a_session_the_bridge_does_not_hold_asks_for_a_resync() -> None:
    reply = Harness().send({"id": 4, "op": "tool", "sessionID": "ses_x", "name": "restore", "arguments": {"ids": ["a"]}})
    assert reply == {"id": 4, "ok": False, "error": "resync"}


def test_a_tool_call_may_bring_the_sessions_messages_along() -> None:
    messages = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    running = assistant(tool_part("discard", {"ids": [ident(messages[1])], "reason": "noise"}, status="running", call_id="c_d"))
    request = {**transform_request(5, SESSION, [*messages, running]), "op": "tool", "name": "discard", "callID": "c_d",
               "arguments": {"ids": [ident(messages[1])], "reason": "noise"}}
    h = Harness()
    h.send({"id": 1, "op": "tools"})
    reply = h.send(request)
    assert reply["error"] is False, reply["output"]


def test_a_call_of_another_tool_is_an_error_reply() -> None:
    h = Harness()
    h.transform(SESSION, [user()])
    reply = h.send({"id": 6, "op": "tool", "sessionID": SESSION, "name": "bash", "arguments": {}})
    assert reply == {"id": 6, "ok": False, "error": '"bash" is not a tool of this plugin'}


def test_a_malformed_tool_request_names_the_field() -> None:
    reply = Harness().send({"id": 7, "op": "tool", "sessionID": SESSION, "name": 3})
    assert reply["ok"] is False and '"name" must be a string' in reply["error"]


def test_the_list_reaches_the_bridge_client_as_an_insertion_at_the_end_of_an_output() -> None:
    h = Harness(config=make_config(tools={"nudgeFrequency": 2}))
    h.send({"id": 1, "op": "tools"})
    messages = [user()] + [call("read", {"filePath": f"/p/{n}.py"}, output=BIG) for n in range(3)]
    reply = h.transform(SESSION, messages)
    [patch] = [p for p in reply["patches"] if "cuts" in p]
    [[start, end, text]] = patch["cuts"]
    assert start == end == len(BIG) == patch["expect"]["length"] and text.startswith("\n\n" + LIST_HEAD)


# -- /dcp context and /dcp stats ----------------------------------------------------------------


def model_session(tmp_path: Path) -> ToolHost:
    host = ToolHost.start()
    host.runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    host.add(user())
    a, b = host.read("a.py", BIG + "a"), host.read("b.py", BIG + "b")
    host.use("discard", {"ids": [a], "reason": "done"})
    host.use("restore", {"ids": [a, "zzzz"]})
    host.use("extract", {"ids": [b], "distillation": ["b"]})  # refused: the cooldown
    host.request()
    return host


def command(host: ToolHost, arguments: str) -> str:
    output: dict[str, Any] = {"parts": []}
    hook_command(host.runtime, {"command": "dcp", "arguments": arguments, "sessionID": SESSION, "messages": copy.deepcopy(host.messages)}, output)
    return output["parts"][0]["text"]


def test_dcp_context_counts_the_models_prunes_and_restores_per_tool(tmp_path: Path) -> None:
    text = command(model_session(tmp_path), "context")
    assert "The model's tools: discard 1 call (1 output), restore 1 call (1 output back, ~" in text
    assert text.split("The model's tools: ")[1].splitlines()[0].endswith("; 1 refused")
    assert [line.split()[:3] for line in text.splitlines() if line.strip().startswith("discard ")] == [["discard", "1", "call"]]


def test_dcp_stats_counts_the_models_prunes_and_restores(tmp_path: Path) -> None:
    lines = command(model_session(tmp_path), "stats").splitlines()
    assert [line.split()[:3] for line in lines if line.strip().startswith(("discard", "extract"))][:2] == [
        ["discard", "1", "call"],
        ["extract", "0", "calls"],
    ]
    [restore] = [line for line in lines if line.strip().startswith("restore")][:1]
    assert restore.split()[:5] == ["restore", "1", "call", "1", "output"]


def test_a_restart_counts_a_restore_once(tmp_path: Path) -> None:
    host = model_session(tmp_path)
    host.runtime.flush()
    again = Runtime(PROJECT, StaticConfig(make_config()))
    again.use_store(Store(tmp_path / "dcp.sqlite3"))
    again.tool_definitions()
    hook_transform(again, {}, {"messages": copy.deepcopy(host.messages)})
    again.flush()
    stats = Store(tmp_path / "dcp.sqlite3").stats(SESSION)
    assert stats is not None and (stats.restores, stats.by_strategy["discard"][0]) == (1, 1)


def test_the_store_keeps_no_content_of_the_models_calls(tmp_path: Path) -> None:
    host = model_session(tmp_path)
    host.runtime.flush()
    data = (tmp_path / "dcp.sqlite3").read_bytes()
    assert b"line of a file" not in data and json.dumps(LIST_HEAD)[1:20].encode() not in data


def test_a_list_taken_out_is_an_empty_cuts_patch_to_a_client_that_keeps_patches_and_nothing_in_a_whole_set() -> None:
    h = Harness(config=make_config(tools={"nudgeFrequency": 2}))
    h.send({"id": 1, "op": "tools"})
    messages = [user()] + [call("read", {"filePath": f"/p/{n}.py"}, output=BIG) for n in range(3)]
    first = h.transform(SESSION, messages)
    [old] = [p for p in first["patches"] if p.get("cuts")]
    messages += [call("read", {"filePath": f"/p/{n}.py"}, output=BIG) for n in range(3, 5)]
    later = h.send({**transform_request(8, SESSION, messages, base=4), "patchToken": first["patchToken"]})
    taken_out = [p for p in later["patches"] if p.get("cuts") == []]
    assert later["incremental"] is True and [(p["messageIndex"], p["partIndex"]) for p in taken_out] == [(old["messageIndex"], old["partIndex"])]
    whole = h.transform(SESSION, messages, base=len(messages))
    assert [p for p in whole["patches"] if "cuts" in p and p["messageIndex"] == old["messageIndex"]] == []
