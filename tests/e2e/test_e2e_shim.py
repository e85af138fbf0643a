"""The JS shim inside the real OpenCode, talking to the stub bridge from tests/js (no Python core)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from dcp_plugin.adapters.bridge.install import render_shim
from tests.e2e.opencode_harness import REPO_ROOT, export_ignored_texts, export_tool_parts, results_by_call

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# The installed entry: it imports the shim's modules from this checkout's dcp_plugin/adapters/bridge/shim/.
SHIM_TEXT = render_shim(sys.executable)
STUB = REPO_ROOT / "tests" / "js" / "stub_bridge.mjs"
HELLO_MARK = "SECRET-CONTENT-1234"
WRITTEN_MARK = "WRITTEN-CONTENT-5678"
PRUNED = "[pruned by stub]"


def install_shim(sc, stub_log: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH (needed to run the stub bridge)")
    # OpenCode only loads *.js and *.ts from .opencode/plugins/, so the module is copied as .js.
    sc.opencode.add_plugin("dcp_bridge.js", SHIM_TEXT)
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


def test_a_dcp_command_in_a_new_process_carries_the_configured_model_limit(shimmed):
    # `opencode run --command` is a new OpenCode process: no chat.params yet, so the shim looks the
    # user message's model up in OpenCode's configured providers.
    [cmd] = stub_requests(shimmed["log"], "command")
    assert cmd["model"] == {"providerID": "fake", "modelID": "fake-model", "limit": {"context": 128000, "output": 4096}}


@pytest.fixture(scope="module")
def installed_twice(module_scenario_factory, tmp_path_factory):
    """The shim in the project's and in the global plugins dir: one OpenCode process loads both."""
    sc = module_scenario_factory("shim_twice")
    stub_log = tmp_path_factory.mktemp("stub_twice") / "requests.jsonl"
    install_shim(sc, stub_log)
    global_plugins = sc.opencode.config_home / "opencode" / "plugins"
    global_plugins.mkdir(parents=True, exist_ok=True)
    (global_plugins / "dcp.js").write_text(SHIM_TEXT)
    # The shim echoes its log lines on stderr: what a copy logged, whether or not OpenCode's log
    # file kept it (OpenCode writes it asynchronously; a line can be missing when the run ends).
    sc.opencode.extra_env["DCP_BRIDGE_DEBUG"] = "1"
    result = sc.opencode.run(["read", "hello.txt", "twice"])
    command = sc.opencode.run(["context"], command="dcp", session=result.session_id)
    shim_log = result.stderr + command.stderr
    # With the plugins, as OpenCode runs an export: the third process the bridge count below expects.
    exported = sc.opencode.export(result.session_id, pure=False)
    return {"sc": sc, "result": result, "command": command, "log": stub_log, "shim_log": shim_log, "exported": exported}


def test_two_installed_copies_start_one_bridge_per_process(installed_twice):
    spawns = [r for r in map(json.loads, installed_twice["log"].read_text().splitlines()) if "spawn" in r]
    # `run`, `run --command` and `export` are three OpenCode processes: one bridge each.
    assert len(spawns) == 3


def test_two_installed_copies_send_one_transform_per_agent_request(installed_twice):
    assert len(stub_requests(installed_twice["log"], "transform")) == len(installed_twice["sc"].provider.agent_requests())


def test_two_installed_copies_answer_dcp_once(installed_twice):
    assert len(stub_requests(installed_twice["log"], "command")) == 1
    assert len(export_ignored_texts(installed_twice["exported"])) == 1


def test_two_installed_copies_still_prune(installed_twice):
    results = results_by_call(installed_twice["sc"].provider.agent_requests()[-1])
    assert (results["call_1"], results["call_2"]) == (PRUNED, PRUNED)


def test_the_idle_copy_says_it_is_loaded_twice_in_the_log(installed_twice):
    assert "loaded twice" in installed_twice["shim_log"]


@pytest.fixture(scope="module")
def broken_bridge(module_scenario_factory):
    """The shim with a bridge whose interpreter cannot import dcp_plugin."""
    sc = module_scenario_factory("shim_broken")
    sc.opencode.add_plugin("dcp.js", SHIM_TEXT)
    failing = [sys.executable, "-c", "raise ModuleNotFoundError(\"No module named 'dcp_plugin'\")"]
    sc.opencode.extra_env.update(DCP_BRIDGE_COMMAND=json.dumps(failing))
    result = sc.opencode.run(["read", "hello.txt", "twice"])
    logs = "".join(p.read_text(errors="replace") for p in (sc.opencode.data_home / "opencode" / "log").glob("*.log"))
    return {"sc": sc, "result": result, "opencode_log": logs}


def test_a_bridge_that_cannot_start_leaves_the_run_working_and_unpruned(broken_bridge):
    assert broken_bridge["result"].returncode == 0, broken_bridge["result"].stderr
    results = results_by_call(broken_bridge["sc"].provider.agent_requests()[-1])
    assert HELLO_MARK in results["call_1"]


def test_a_bridge_that_cannot_start_is_reported_with_its_reason(broken_bridge):
    assert "pruning is off" in broken_bridge["opencode_log"]
    assert "No module named 'dcp_plugin'" in broken_bridge["opencode_log"]
