"""The JS shim inside the real OpenCode, talking to the stub bridge from tests/js (no Python core)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from opencode_harness import REPO_ROOT, export_ignored_texts, export_tool_parts, results_by_call

pytestmark = pytest.mark.e2e

SHIM = REPO_ROOT / "dcp_plugin" / "bridge" / "dcp_bridge.mjs"
STUB = REPO_ROOT / "tests" / "js" / "stub_bridge.mjs"
HELLO_MARK = "SECRET-CONTENT-1234"
WRITTEN_MARK = "WRITTEN-CONTENT-5678"
PRUNED = "[pruned by stub]"


def install_shim(sc, stub_log: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH (needed to run the stub bridge)")
    # OpenCode only loads *.js and *.ts from .opencode/plugins/, so the module is copied as .js.
    sc.opencode.add_plugin("dcp_bridge.js", SHIM.read_text())
    sc.opencode.extra_env.update(
        DCP_BRIDGE_COMMAND=json.dumps([node, str(STUB)]),
        STUB_LOG=str(stub_log),
        STUB_PRUNE=HELLO_MARK,
    )


def stub_requests(stub_log: Path, op: str) -> list[dict]:
    lines = stub_log.read_text().splitlines() if stub_log.exists() else []
    return [r for r in map(json.loads, lines) if r.get("op") == op]


@pytest.fixture(scope="module")
def shimmed(module_scenario_factory, tmp_path_factory):
    sc = module_scenario_factory("shim")
    stub_log = tmp_path_factory.mktemp("stub") / "requests.jsonl"
    install_shim(sc, stub_log)
    result = sc.opencode.run(["read", "hello.txt", "twice"])
    before = len(sc.provider.requests)
    command = sc.opencode.run(["context"], command="dcp", session=result.session_id)
    return {
        "sc": sc,
        "result": result,
        "log": stub_log,
        "command": command,
        "requests_during_command": len(sc.provider.requests) - before,
        "exported": sc.opencode.export(result.session_id),
    }


def test_run_with_the_shim_exits_zero(shimmed):
    assert shimmed["result"].returncode == 0, shimmed["result"].stderr


def test_the_stub_gets_startup_with_the_project_directory(shimmed):
    [startup, *_] = stub_requests(shimmed["log"], "startup")
    assert Path(startup["context"]["directory"]).resolve() == shimmed["sc"].opencode.project.resolve()


def test_one_transform_per_agent_request(shimmed):
    assert len(stub_requests(shimmed["log"], "transform")) == len(shimmed["sc"].provider.agent_requests())


def test_the_first_transform_sends_the_session_in_full(shimmed):
    first = stub_requests(shimmed["log"], "transform")[0]
    assert (first["reset"], first["base"], len(first["messages"])) == (True, 0, 1)


def test_later_transforms_send_one_new_message_each(shimmed):
    later = stub_requests(shimmed["log"], "transform")[1:]
    assert [(t["reset"], t["base"], len(t["messages"])) for t in later] == [
        (False, n, 1) for n in range(1, len(later) + 1)
    ]


def test_both_hello_reads_reach_the_provider_as_placeholders(shimmed):
    results = results_by_call(shimmed["sc"].provider.agent_requests()[-1])
    assert (results["call_1"], results["call_2"]) == (PRUNED, PRUNED)


def test_unpruned_results_reach_the_provider_unchanged(shimmed):
    results = results_by_call(shimmed["sc"].provider.agent_requests()[-1])
    assert WRITTEN_MARK in results["call_4"]
    assert "File not found" in results["call_5"]


def test_placeholders_are_not_stored(shimmed):
    first_read = export_tool_parts(shimmed["exported"])[0]
    assert HELLO_MARK in first_read["state"]["output"]


def test_dcp_command_is_answered_by_the_bridge(shimmed):
    [cmd] = stub_requests(shimmed["log"], "command")
    assert (cmd["command"], cmd["arguments"]) == ("dcp", "context")


def test_dcp_command_reply_is_stored_without_a_model_turn(shimmed):
    assert shimmed["requests_during_command"] == 0
    [reply] = export_ignored_texts(shimmed["exported"])
    assert reply.startswith("stub context (")
