"""The real pipeline: OpenCode -> JS shim -> `python -m dcp_plugin.adapters.bridge` -> placeholders at the provider.

One scripted session, run twice with the plugin installed by `dcp opencode install` (the second run
adds a user turn, so the failed call is old enough for purgeErrors with `turns: 1`), and the same
two runs with `--pure` (no plugins) as the baseline. Every agent request of the bridged session is
compared with the baseline request at the same position: they differ exactly where a placeholder
is expected, and nowhere else.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.pipeline.placeholders import (
    DUPLICATE_PLACEHOLDER,
    FAILED_INPUT_PLACEHOLDER,
    SUPERSEDED_PLACEHOLDER,
    placeholder_for,
)
from tests.e2e.fake_provider import Step, Text, ToolCall
from tests.e2e.opencode_harness import (
    export_ignored_texts,
    export_tool_parts,
    install_plugin,
    results_by_call,
    tool_call_arguments,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HELLO_MARK = "SECRET-CONTENT-1234"
WRITTEN_MARK = "WRITTEN-CONTENT-5678"
# Longer than the purge placeholder, so replacing it shrinks the request whatever the temp path.
MISSING = "missing-" + "x" * 48 + ".txt"
DCP_CONFIG = {
    "strategies": {"supersedeWrites": {"enabled": True}, "purgeErrors": {"enabled": True, "turns": 1}},
    # What is pruned, request by request: every decision written at once (the scheduler's own e2e
    # test checks when placeholders are written under prompt-cache pricing).
    "cache": {"scheduler": False},
}
# Longer than the supersede placeholder: a placeholder never replaces something shorter.
NOTES = f"notes written by the agent\n{WRITTEN_MARK}\n" + "more notes, line by line\n" * 4
FIRST_PROMPT = ["read", "hello.txt", "twice,", "write", "notes.txt", "and", "read", "it"]
SECOND_PROMPT = ["thanks,", "anything", "else?"]


def script(project: Path) -> list[Step]:
    """Read hello.txt twice, write then read notes.txt, fail a read, answer; the second run just answers."""
    hello, notes = str(project / "hello.txt"), str(project / "notes.txt")
    return [
        ToolCall("read", {"filePath": hello}),
        ToolCall("read", {"filePath": hello}),
        ToolCall("write", {"filePath": notes, "content": NOTES}),
        ToolCall("read", {"filePath": notes}),
        ToolCall("read", {"filePath": str(project / MISSING)}),
        Text("Read hello.txt twice, wrote and read notes.txt; the other file does not exist."),
    ]


def scripted(factory, name: str):
    sc = factory(name, [])
    sc.provider.script = script(sc.opencode.project)  # the script needs the project's path
    return sc


def two_runs(sc, pure: bool) -> dict[str, Any]:
    first = sc.opencode.run(FIRST_PROMPT, pure=pure)
    second = sc.opencode.run(SECOND_PROMPT, pure=pure, session=first.session_id)
    return {"first": first, "second": second, "session": first.session_id}


def bridged_session(sc) -> dict[str, Any]:
    installed = install_plugin(sc.opencode.project)
    assert installed.returncode == 0, installed.stderr
    (sc.opencode.project / ".opencode" / "dcp.jsonc").write_text(
        "// written by the e2e test: every strategy shows within two runs\n" + json.dumps(DCP_CONFIG, indent=2)
    )
    runs = two_runs(sc, pure=False)
    before = len(sc.provider.requests)
    command = sc.opencode.run(["context"], command="dcp", session=runs["session"])
    return {
        **runs,
        "sc": sc,
        "install": installed,
        "command": command,
        "requests_during_command": len(sc.provider.requests) - before,
        "exported": sc.opencode.export(runs["session"]),
    }


@pytest.fixture(scope="module")
def both(module_scenario_factory):
    """The bridged and the baseline session, driven at the same time (each is mostly waiting)."""
    bridged_sc = scripted(module_scenario_factory, "bridged")
    baseline_sc = scripted(module_scenario_factory, "baseline")
    with ThreadPoolExecutor(max_workers=2) as pool:
        pure = pool.submit(two_runs, baseline_sc, True)
        bridged_result = bridged_session(bridged_sc)
        return {"bridged": bridged_result, "baseline": {**pure.result(), "sc": baseline_sc}}


@pytest.fixture(scope="module")
def bridged(both):
    return both["bridged"]


@pytest.fixture(scope="module")
def baseline(both):
    return both["baseline"]


def spots(request: dict[str, Any], project: Path) -> dict[tuple[str, str], Any]:
    """Every piece of conversation content of a provider request, keyed by where it is.

    Tool results and call arguments by call id, other messages by position; the project path is
    replaced by a token so two projects in different temp dirs compare equal.
    """
    out: dict[tuple[str, str], Any] = {}
    # Positions count the conversation only: the plugin adds its own system text (compared apart).
    conversation = [m for m in request.get("messages", []) if m.get("role") != "system"]
    for i, message in enumerate(conversation):
        if message.get("role") == "tool":
            out[("result", message.get("tool_call_id", ""))] = message.get("content")
        else:
            out[("message", str(i))] = {k: v for k, v in message.items() if k != "tool_calls"}
    for call_id, args in tool_call_arguments(request).items():
        out[("args", call_id)] = args
    token = json.dumps(str(project))[1:-1]  # the path as it appears inside JSON text
    return {key: json.loads(json.dumps(value).replace(token, "<project>")) for key, value in out.items()}


def differences(bridged_request: dict[str, Any], bridged_project: Path, pure_request: dict[str, Any], pure_project: Path) -> dict[tuple[str, str], Any]:
    """Where the bridged request differs from the baseline one, with the bridged value."""
    b, p = spots(bridged_request, bridged_project), spots(pure_request, pure_project)
    assert b.keys() == p.keys()
    return {key: b[key] for key in b if b[key] != p[key]}


def expected_differences(position: int) -> dict[tuple[str, str], Any]:
    """The placeholders the agent request at ``position`` (k tool results for k < 6) must carry."""
    out: dict[tuple[str, str], Any] = {}
    if position >= 2:  # hello.txt was read again: the older read's output is obsolete
        out[("result", "call_1")] = placeholder_for(DUPLICATE_PLACEHOLDER, "call_1")
    if position >= 4:  # notes.txt was read back: the written content is obsolete, its path stays
        out[("args", "call_3")] = {"filePath": "<project>/notes.txt", "content": placeholder_for(SUPERSEDED_PLACEHOLDER, "call_3")}
    if position >= 6:  # the second run is a new user turn: the failed read is 1 turn old
        out[("args", "call_5")] = {"filePath": placeholder_for(FAILED_INPUT_PLACEHOLDER, "call_5")}
    return out


# -- install --------------------------------------------------------------------------------


def test_install_writes_the_plugin_into_the_project(bridged):
    path = bridged["sc"].opencode.plugins_dir / "dcp.js"
    assert f"const INSTALLED_PYTHON = {json.dumps(sys.executable)};" in path.read_text()


def test_both_bridged_runs_exit_zero(bridged):
    assert (bridged["first"].returncode, bridged["second"].returncode) == (0, 0), bridged["second"].stderr[-2000:]


def test_both_baseline_runs_exit_zero(baseline):
    assert (baseline["first"].returncode, baseline["second"].returncode) == (0, 0), baseline["second"].stderr[-2000:]


def test_the_bridged_session_makes_the_same_agent_requests_as_the_baseline(bridged, baseline):
    assert len(bridged["sc"].provider.agent_requests()) == len(baseline["sc"].provider.agent_requests()) == 7


# -- what reached the provider --------------------------------------------------------------


@pytest.mark.parametrize("position", range(7))
def test_each_request_differs_from_the_baseline_exactly_by_the_expected_placeholders(bridged, baseline, position):
    got = differences(
        bridged["sc"].provider.agent_requests()[position],
        bridged["sc"].opencode.project,
        baseline["sc"].provider.agent_requests()[position],
        baseline["sc"].opencode.project,
    )
    assert got == expected_differences(position)


def test_the_newest_hello_read_is_sent_in_full(bridged):
    assert HELLO_MARK in results_by_call(bridged["sc"].provider.agent_requests()[-1])["call_2"]


def test_the_read_back_file_is_sent_in_full(bridged):
    assert WRITTEN_MARK in results_by_call(bridged["sc"].provider.agent_requests()[-1])["call_4"]


def test_a_failed_call_keeps_its_error_after_its_input_is_purged(bridged):
    assert "not found" in results_by_call(bridged["sc"].provider.agent_requests()[-1])["call_5"].lower()


def test_a_young_failed_call_is_sent_in_full(bridged):
    within_first_run = bridged["sc"].provider.agent_requests()[5]
    assert tool_call_arguments(within_first_run)["call_5"]["filePath"].endswith(MISSING)


def test_the_baseline_carries_every_original_content(baseline):
    last = baseline["sc"].provider.agent_requests()[-1]
    args, results = tool_call_arguments(last), results_by_call(last)
    assert HELLO_MARK in results["call_1"] and HELLO_MARK in results["call_2"]
    assert WRITTEN_MARK in args["call_3"]["content"]
    assert args["call_5"]["filePath"].endswith(MISSING)
    assert "[dcp:" not in json.dumps(baseline["sc"].provider.requests)


def test_placeholders_are_not_stored_in_the_session(bridged):
    parts = export_tool_parts(bridged["exported"])
    assert HELLO_MARK in parts[0]["state"]["output"]
    assert WRITTEN_MARK in parts[2]["state"]["input"]["content"]
    assert parts[4]["state"]["input"]["filePath"].endswith(MISSING)


# -- /dcp context through the real binary ---------------------------------------------------


def test_dcp_context_is_answered_without_a_model_turn(bridged):
    assert bridged["requests_during_command"] == 0


def test_dcp_context_reply_is_stored_as_an_ignored_message(bridged):
    [reply] = export_ignored_texts(bridged["exported"])
    assert bridged["session"] in reply and "unavailable" not in reply


def test_dcp_context_reply_reports_what_the_strategies_pruned(bridged):
    [reply] = export_ignored_texts(bridged["exported"])
    assert all(name in reply for name in ("deduplication", "supersedeWrites", "purgeErrors"))
