"""What OpenCode 1.18 writes in its log for the plugin, as README's troubleshooting describes it.

A session with the plugin (one duplicate read pruned), then `/dcp context`; the log in the
isolated data dir is read back. OpenCode writes a plugin's lines as `message="..."` without the
service the plugin gives, and only INFO and higher by default.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.opencode_harness import install_plugin

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def logged(module_scenario_factory) -> dict[str, Any]:
    from tests.e2e.fake_provider import ToolCall, standard_script

    # The plugin's log lines reach OpenCode's log through its own HTTP API without waiting: a run that
    # ends a moment after the prune can exit before that line is written. A short pause before the
    # answer lets it land (without it, about one run in two on a loaded machine had no prune line).
    sc = module_scenario_factory("log", [])
    script = standard_script(sc.opencode.project)
    sc.provider.script = [*script[:-1], ToolCall("bash", {"command": "sleep 2", "description": "Wait"}), script[-1]]
    installed = install_plugin(sc.opencode.project)
    assert installed.returncode == 0, installed.stderr
    (sc.opencode.project / ".opencode" / "dcp.jsonc").write_text(json.dumps({"cache": {"scheduler": False}}))
    # On a busy machine a request can outlast the bridge's 5 s default and go out unpruned (no prune line).
    sc.opencode.extra_env["DCP_BRIDGE_TIMEOUT_MS"] = "60000"
    run = sc.opencode.run(["read", "hello.txt", "twice"])
    # OpenCode writes its log without waiting, and a command that throws ends its process at once: on a
    # loaded machine the command's own line was sometimes never written (twice in CI runs). Whether the
    # command leaves an error line can only be told from a log that has it, so it is run again, at most
    # twice more, until one does.
    for _ in range(3):
        command = sc.opencode.run(["context"], command="dcp", session=run.session_id)
        logs = sorted((sc.opencode.data_home / "opencode" / "log").glob("*.log"))
        text = "\n".join(p.read_text() for p in logs)
        if "command=dcp" in text:
            break
    return {"run": run, "command": command, "logs": logs, "text": text}


def plugin_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if 'message="dcp:' in line]


def test_the_session_ran_and_the_log_is_where_readme_says(logged):
    assert logged["run"].returncode == 0, logged["run"].stderr[-2000:]
    assert [p.name for p in logged["logs"]] == ["opencode.log"]
    assert "`$XDG_DATA_HOME/opencode/log/opencode.log`" in README.read_text()


def test_the_plugins_lines_start_with_dcp_and_name_the_bridge_and_the_prune(logged):
    lines = plugin_lines(logged["text"])
    assert any('message="dcp: started bridge: ' in line for line in lines), lines
    assert any('message="dcp: pruned 1 tool call' in line for line in lines), lines


def test_opencode_writes_no_service_field_for_the_plugin(logged):
    assert "service=dcp" not in logged["text"]
    assert "service=dcp" not in README.read_text()


def test_a_dcp_command_leaves_no_error_line_in_the_log(logged):
    command = logged["command"]
    # On failure, what the command's run printed: once in a CI run its log line was missing, and only
    # the run's own output tells whether OpenCode never took the command or just lost the log line.
    said = f"stdout: {command.stdout[-3000:]}\nstderr: {command.stderr[-3000:]}"
    assert command.returncode == 1, said  # the throw that keeps the command from the model
    assert "command=dcp" in logged["text"], said
    assert not re.search(r"level=ERROR", logged["text"])
