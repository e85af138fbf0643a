"""N1/N2 as a property: whatever the host does to an output, the model never gets more, nor what the host dropped."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pluggy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.modeltools.texts import LIST_HEAD
from tests.support.bridge_helpers import Harness, transform_request
from tests.support.helpers import PROJECT, SESSION, call, make_config, tool_parts, user

CLEARED = "[Old tool result content cleared]"
LINE = "line of a file that is long enough to be worth pruning\n"
TOKEN = re.compile(r"<v\d+>")
CHANGES = st.sampled_from(["clear", "replace", "null", "grow", "shrink", "same-length"])
# (which output, what the host does to it, a size)
STEPS = st.lists(st.tuples(st.integers(0, 3), CHANGES, st.integers(1, 60)), min_size=1, max_size=8)


def version(n: int, lines: int) -> str:
    return f"<v{n}>\n" + LINE * lines


def history() -> list[dict[str, Any]]:
    """A duplicate read pair (the older one pruned), then reads of new files until a prunable list is written."""
    messages = [user(), call("read", {"filePath": f"{PROJECT}/a.py"}, output=version(0, 40))]
    messages.append(call("read", {"filePath": f"{PROJECT}/a.py"}, output=version(1, 40)))
    for n in range(2, 6):
        messages.append(call("read", {"filePath": f"{PROJECT}/f{n}.py"}, output=version(n, 40)))
    return messages


def change(state: dict[str, Any], what: str, size: int, n: int) -> None:
    output = state.get("output")
    text = output if isinstance(output, str) else ""
    if what == "clear":
        state["output"] = CLEARED
        state["time"] = {"start": 1, "end": 2, "compacted": 1700000000000}
    elif what == "replace":
        state["output"] = version(n, size)
    elif what == "null":
        state["output"] = None
    elif what == "grow":
        state["output"] = text + version(n, size)
    elif what == "shrink":
        state["output"] = text[: len(text) * size // 61]
    else:  # a new text exactly as long as the one it replaces
        head = f"<v{n}>"
        state["output"] = (head + "N" * len(text))[: len(text)] if len(text) >= len(head) else text


def size(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(json.dumps(value))


def check(received: Any, held: Any) -> None:
    """The model's copy of an output against the host's: never bigger (but for the plugin's list), nothing dropped."""
    if isinstance(received, str) and isinstance(held, str) and received.startswith(held) and LIST_HEAD in received[len(held) :]:
        return  # the list of prunable outputs, appended to the output as the host holds it now
    assert received == held or size(received) < size(held), (received, held)
    if isinstance(received, str):
        gone = set(TOKEN.findall(received)) - set(TOKEN.findall(held if isinstance(held, str) else ""))
        assert not gone, f"content the host no longer holds: {gone}"


def targets(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p["state"] for p in tool_parts(messages)]


def pluggy_host() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config(tools={"nudgeFrequency": 3})))), name="dcp")
    pm.hook.tool_definitions()
    return pm


@settings(max_examples=60, deadline=None)
@given(steps=STEPS)
def test_through_the_pluggy_hook_no_output_grows_or_brings_back_what_the_host_dropped(steps: list[tuple[int, str, int]]) -> None:
    pm = pluggy_host()
    messages = history()
    for count in range(2, len(messages) + 1):
        pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": copy.deepcopy(messages[:count])})
    for n, (which, what, amount) in enumerate(steps, start=10):
        change(targets(messages)[which], what, amount, n)
        sent = copy.deepcopy(messages)
        pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": sent})
        for received, held in zip(targets(sent), targets(messages), strict=True):
            check(received.get("output"), held.get("output"))


def apply_kept(messages: list[dict[str, Any]], kept: dict[tuple[int, int, str], dict[str, Any]]) -> None:
    """What the JS side does with the patches it keeps (PROTOCOL.md): values set, cuts only on the string they were made for."""
    for (m, p, field), patch in kept.items():
        state = messages[m]["parts"][p]["state"]
        if "cuts" in patch:
            original = state.get(field)
            if not isinstance(original, str) or len(original.encode("utf-16-le")) // 2 != patch["expect"]["length"]:
                continue
            out, at = "", 0
            for start, end, text in patch["cuts"]:
                out, at = out + original[at:start] + text, end
            state[field] = out + original[at:]
        else:
            state[field] = patch["value"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_through_the_bridge_no_output_grows_or_brings_back_what_the_host_dropped(steps: list[tuple[int, str, int]]) -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config(tools={"nudgeFrequency": 3})))
    runtime.tool_definitions()
    h = Harness(runtime)
    messages = history()
    kept: dict[tuple[int, int, str], dict[str, Any]] = {}
    token: str | None = None
    held = 0

    def request(base: int) -> list[dict[str, Any]]:
        nonlocal token, held, kept
        reply = h.send({**transform_request(h.rid(), SESSION, messages, base=base), "patchToken": token})
        fresh = {(p["messageIndex"], p["partIndex"], p["field"]): p for p in reply["patches"]}
        kept = {**kept, **fresh} if reply.get("incremental") else fresh
        kept = {key: patch for key, patch in kept.items() if patch.get("cuts") != []}
        token, held = reply["patchToken"], len(messages)
        sent = copy.deepcopy(messages)
        apply_kept(sent, kept)
        return sent

    for count in range(2, len(messages) + 1):
        whole = messages
        messages = whole[:count]
        request(held)
        messages = whole
    indexes = [i for i, m in enumerate(messages) if tool_parts([m])]
    for n, (which, what, amount) in enumerate(steps, start=10):
        change(targets(messages)[which], what, amount, n)
        sent = request(indexes[which])  # the shim resends from the message it saw change
        for received, now in zip(targets(sent), targets(messages), strict=True):
            check(received.get("output"), now.get("output"))
