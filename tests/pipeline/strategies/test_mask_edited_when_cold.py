"""maskOldOutputs' editedWhenCold: at a request the prompt cache is cold for, views of edited files are not held by their cycle."""

from __future__ import annotations

import copy
from typing import Any

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.strategies.file_views import edits_file
from dcp_plugin.pipeline.strategies.mask_old_outputs import placeholder
from tests.support.helpers import PROJECT, assistant, call, hook_transform, make_config, named, tool_parts, user

KB = "x" * 3000  # 1,000 tokens as a tool output (chars / 3)
MINUTE = 60_000


def read(name: str) -> dict[str, Any]:
    return call("read", {"filePath": f"{PROJECT}/src/{name}"}, output=KB)


def edit(name: str) -> dict[str, Any]:
    return call("edit", {"filePath": f"{PROJECT}/src/{name}", "oldString": "a", "newString": "b"}, output="ok")


def session(pause_ms: int) -> list[dict[str, Any]]:
    """One cycle of work: reads of a.py and b.py, an edit of a.py, then a pause before the last step."""
    messages = [user(), read("a.py"), read("b.py"), edit("a.py"), call("grep", {"pattern": "x"}, output="y" * 30),
                assistant({"type": "text", "text": "done"})]
    clock = 1_000_000
    for message in messages:
        clock += pause_ms if message is messages[-1] else 1000
        message["info"]["time"] = {"created": clock}
    return messages


def outputs(messages: list[dict[str, Any]], **mask: Any) -> list[Any]:
    settings = {"trigger": 1000, "keepTurns": 3, "keepCalls": 0, **mask}
    config = make_config(strategies={"maskOldOutputs": settings}, cache={"scheduler": True, "pricing": "anthropic"})
    runtime = Runtime(PROJECT, StaticConfig(config))
    out = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": out})
    return [p["state"].get("output") for p in tool_parts(out)]


def test_after_a_pause_past_the_cache_the_view_of_an_edited_file_goes_and_the_others_stay():
    messages = session(10 * MINUTE)
    found = outputs(messages)
    assert found[0] == named(placeholder("read src/a.py", 1000), messages[1])
    assert found[1] == KB


def test_while_the_cache_is_warm_the_cycle_keeps_the_view_of_an_edited_file():
    assert outputs(session(MINUTE))[:2] == [KB, KB]


def test_turned_off_a_cold_request_keeps_the_cycle_whole():
    assert outputs(session(10 * MINUTE), editedWhenCold=False)[:2] == [KB, KB]


def test_keep_calls_still_holds_the_newest_outputs_at_a_cold_request():
    assert outputs(session(10 * MINUTE), keepCalls=4)[:2] == [KB, KB]


def test_edit_and_write_tools_and_an_editors_changing_commands_edit_a_file():
    assert edits_file("edit") and edits_file("write") and edits_file("apply_patch")
    assert edits_file("str_replace_based_edit_tool", {"command": "str_replace"})


def test_reads_searches_and_an_editors_view_do_not_edit_a_file():
    assert not edits_file("read") and not edits_file("grep")
    assert not edits_file("str_replace_based_edit_tool", {"command": "view"})

