"""The model prunes with discard, extract and restore inside the real OpenCode, through the real bridge.

The scripted model reads three big files, discards one, extracts another, restores the first,
and tries to restore an id that does not exist. Every request the provider receives afterwards is
checked: the pruned content is gone (or comes back as the restore's own result, at the tail, with
the earlier messages byte-identical), the plugin's system text and tool definitions never change,
and `opencode export` still shows the history exactly as stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.pipeline.ids import short_id
from dcp_plugin.pipeline.modeltools.texts import LIST_HEAD
from dcp_plugin.pipeline.placeholders import DISCARDED_PLACEHOLDERS, SUMMARY_HEADER, placeholder_for
from tests.e2e.fake_provider import Step, Text, ToolCall
from tests.e2e.opencode_harness import export_ignored_texts, export_tool_parts, results_by_call
from tests.e2e.test_e2e_bridge import install_plugin

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LOG_MARK = "LOG-MARK-4242"
BIG_MARK = "BIG-MARK-7777"
DISTILLATION = "big.txt: 200 numbered filler lines, nothing else of note"
# What is pruned, request by request: every decision written at once (so a newer list also takes
# the older one out at once); a list every 2 tool results.
DCP_CONFIG = {"cache": {"scheduler": False}, "tools": {"nudgeFrequency": 2}}
# Tool results, in order: the fake provider names calls call_1, call_2, ... by the results so far.
LOG, BIG, DISCARD, EXTRACT, RESTORE, BAD_RESTORE = "call_2", "call_3", "call_4", "call_8", "call_9", "call_10"


def script(project: Path) -> list[Step]:
    read = lambda name: ToolCall("read", {"filePath": str(project / name)})  # noqa: E731
    return [
        read("hello.txt"),
        read("log.txt"),
        read("big.txt"),
        ToolCall("discard", {"ids": [short_id(LOG)], "reason": "noise"}),
        read("a.txt"),
        read("b.txt"),
        read("c.txt"),  # three steps after the discard: the cooldown is over
        ToolCall("extract", {"ids": [short_id(BIG)], "distillation": [DISTILLATION]}),
        ToolCall("restore", {"ids": [short_id(LOG)]}),
        ToolCall("restore", {"ids": ["zzzz"]}),
        Text("Done: pruned what I no longer need."),
    ]


@pytest.fixture(scope="module")
def run(module_scenario_factory) -> dict[str, Any]:
    sc = module_scenario_factory("tools", [])
    project = sc.opencode.project
    sc.provider.script = script(project)
    (project / "log.txt").write_text("".join(f"{n}: build step {n} ok {LOG_MARK}\n" for n in range(200)))
    (project / "big.txt").write_text("".join(f"{n}: filler line number {n} {BIG_MARK}\n" for n in range(200)))
    for name in ("a.txt", "b.txt", "c.txt"):
        (project / name).write_text(f"{name}: small\n" * 30)
    installed = install_plugin(project)
    assert installed.returncode == 0, installed.stderr
    (project / ".opencode" / "dcp.jsonc").write_text(json.dumps(DCP_CONFIG))
    result = sc.opencode.run(["prune", "what", "you", "no", "longer", "need"])
    command = sc.opencode.run(["context"], command="dcp", session=result.session_id)
    return {
        "sc": sc,
        "result": result,
        "requests": sc.provider.agent_requests(),
        "exported": sc.opencode.export(result.session_id),
        "command": command,
    }


def conversation(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m.get("role") != "system"]


def test_the_run_exits_zero_and_makes_every_scripted_request(run):
    assert run["result"].returncode == 0, run["result"].stderr[-2000:]
    assert len(run["requests"]) == 11


def test_the_model_is_offered_the_three_tools_on_every_request(run):
    offered = [{t["function"]["name"]: t["function"] for t in r["tools"]} for r in run["requests"]]
    assert all({"discard", "extract", "restore"} <= set(tools) for tools in offered)
    assert all(tools["discard"] == offered[0]["discard"] for tools in offered)
    assert offered[0]["discard"]["parameters"]["required"] == ["ids", "reason"]


def test_the_system_text_is_on_every_request_and_never_changes(run):
    texts = [[m["content"] for m in r["messages"] if m["role"] == "system" and "[dcp: instructions]" in m["content"]] for r in run["requests"]]
    assert all(len(t) == 1 for t in texts) and len({t[0] for t in texts}) == 1
    assert "never by the user" in texts[0][0]


def test_the_discard_is_accepted_and_the_output_is_gone_from_every_later_request(run):
    requests = run["requests"]
    assert results_by_call(requests[4])[DISCARD].startswith("Discarded 1 output")
    assert LOG_MARK in results_by_call(requests[3])[LOG]
    for request in requests[4:8]:
        assert results_by_call(request)[LOG] == placeholder_for(DISCARDED_PLACEHOLDERS["noise"], LOG)
        assert LOG_MARK not in json.dumps(request)


def test_the_extract_keeps_the_distillation_in_place_of_the_output(run):
    requests = run["requests"]
    assert results_by_call(requests[8])[EXTRACT].startswith("Extracted 1 output")
    for request in requests[8:]:
        assert results_by_call(request)[BIG] == placeholder_for(SUMMARY_HEADER, BIG) + "\n" + DISTILLATION
        assert BIG_MARK not in json.dumps(request)


def test_the_restore_brings_the_original_back_as_its_own_result_at_the_tail(run):
    before, after = run["requests"][8], run["requests"][9]
    results = results_by_call(after)
    assert LOG_MARK in results[RESTORE] and results[RESTORE].startswith("Restored 1 output")
    assert results[LOG] == placeholder_for(DISCARDED_PLACEHOLDERS["noise"], LOG)
    assert conversation(after)[: len(conversation(before))] == conversation(before)


def test_a_refused_call_is_a_failed_call_the_model_reads_the_reason_of(run):
    text = results_by_call(run["requests"][10])[BAD_RESTORE]
    assert text.startswith("Refused: nothing was restored:") and "zzzz: no tool output has this id" in text
    [part] = [p for p in export_tool_parts(run["exported"]) if p["callID"] == BAD_RESTORE]
    assert part["state"]["status"] == "error" and part["state"]["error"] == text


def test_a_written_list_stays_byte_identical_until_a_newer_one_replaces_it(run):
    requests = run["requests"]
    carried: dict[str, str] = {}
    written = 0
    for request in requests:
        results = results_by_call(request)
        fresh = {c: t for c, t in results.items() if LIST_HEAD in t and carried.get(c) != t}
        written += len(fresh)
        for call_id, text in carried.items():
            if call_id in (LOG, BIG):
                continue  # pruned by the model: the list went with the output
            if fresh:
                # Without the cache scheduler (this test's config) the older list is taken out at once.
                assert LIST_HEAD not in results[call_id]
            else:
                assert results[call_id] == text
        carried = {c: t for c, t in results.items() if LIST_HEAD in t}
    assert written >= 1


def test_opencode_export_still_shows_the_history_as_stored(run):
    parts = {p["callID"]: p for p in export_tool_parts(run["exported"])}
    assert LOG_MARK in parts[LOG]["state"]["output"] and BIG_MARK in parts[BIG]["state"]["output"]
    assert [parts[c]["tool"] for c in (DISCARD, EXTRACT, RESTORE)] == ["discard", "extract", "restore"]
    assert parts[EXTRACT]["state"]["input"] == {"ids": [short_id(BIG)], "distillation": [DISTILLATION]}
    assert "[dcp:" not in json.dumps([p["state"].get("output") for p in parts.values() if p["tool"] == "read"])


def test_dcp_context_counts_the_models_calls_per_tool(run):
    [reply] = export_ignored_texts(run["exported"])  # exported after the `/dcp context` run
    assert "The model's tools: discard 1 call (1 output), extract 1 call (1 output), restore 1 call (1 output back" in reply
    assert "; 1 refused" in reply
