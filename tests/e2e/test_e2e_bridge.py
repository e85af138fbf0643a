"""The real pipeline: OpenCode -> JS shim -> `python -m dcp_plugin.bridge` -> placeholders at the provider.

Skeleton until the Python bridge server exists; the lead completes the assertions that depend on the
plugin's placeholder wording and defaults.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from opencode_harness import REPO_ROOT, export_ignored_texts, results_by_call, tool_call_arguments

SHIM = REPO_ROOT / "dcp_plugin" / "bridge" / "dcp_bridge.mjs"
HELLO_MARK = "SECRET-CONTENT-1234"
WRITTEN_MARK = "WRITTEN-CONTENT-5678"


def _bridge_server_present() -> bool:
    try:
        return importlib.util.find_spec("dcp_plugin.bridge.server") is not None
    except ModuleNotFoundError:
        return False


pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not _bridge_server_present(), reason="bridge server pending"),
]


@pytest.fixture(scope="module")
def bridged(module_scenario_factory):
    sc = module_scenario_factory("bridge")
    # OpenCode only loads *.js and *.ts from .opencode/plugins/.
    sc.opencode.add_plugin("dcp_bridge.js", SHIM.read_text())
    sc.opencode.extra_env["DCP_PYTHON"] = sys.executable
    result = sc.opencode.run(["read", "hello.txt", "twice"])
    before = len(sc.provider.requests)
    command = sc.opencode.run(["context"], command="dcp", session=result.session_id)
    return {
        "sc": sc,
        "result": result,
        "last": sc.provider.agent_requests()[-1],
        "command": command,
        "requests_during_command": len(sc.provider.requests) - before,
        "exported": sc.opencode.export(result.session_id),
    }


def test_run_with_the_bridge_exits_zero(bridged):
    assert bridged["result"].returncode == 0, bridged["result"].stderr


def test_the_older_duplicate_read_is_replaced_by_a_placeholder(bridged):
    assert HELLO_MARK not in results_by_call(bridged["last"])["call_1"]


def test_the_newest_duplicate_read_is_sent_in_full(bridged):
    assert HELLO_MARK in results_by_call(bridged["last"])["call_2"]


def test_write_and_read_back_are_sent_in_full_with_supersede_off(bridged):
    assert WRITTEN_MARK in tool_call_arguments(bridged["last"])["call_3"]["content"]
    assert WRITTEN_MARK in results_by_call(bridged["last"])["call_4"]


def test_a_young_failed_call_keeps_its_input_and_error(bridged):
    assert tool_call_arguments(bridged["last"])["call_5"]["filePath"].endswith("missing.txt")
    assert "File not found" in results_by_call(bridged["last"])["call_5"]


def test_dcp_context_is_answered_without_a_model_turn(bridged):
    assert bridged["requests_during_command"] == 0
    assert len(export_ignored_texts(bridged["exported"])) == 1
