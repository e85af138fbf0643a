"""Stale diagnostics with the real OpenCode binary and a real (tiny) language server.

OpenCode runs a custom LSP server from opencode.json (tests/e2e/fake_lsp.py: every line holding
`ERROR-HERE` is an error) and appends its errors to write and edit results. The scripted model
writes a.py with two errors, writes b.py with one (its result reports a.py's errors again, as
"other files"), then fixes a.py with an edit that reports no errors. The provider must receive
the older blocks for a.py cut, everything else as OpenCode wrote it, and `opencode export` must
still hold every block.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.pipeline.placeholders import placeholder_for
from dcp_plugin.pipeline.strategies.stale_diagnostics import placeholder
from tests.e2e.fake_provider import Text, ToolCall
from tests.e2e.opencode_harness import export_tool_parts, install_plugin, results_by_call

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FAKE_LSP = Path(__file__).resolve().parent / "fake_lsp.py"
WROTE = "Wrote file successfully."
A_CONTENT = "x = 1\ny = ERROR-HERE\nz = 3\nw = ERROR-HERE\n"
B_CONTENT = "import ERROR-HERE\n"


def a_gone(call_id: str) -> str:
    """What pruning leaves of a cut block for a.py with its header: the blank line and one line naming the call."""
    return "\n\n" + placeholder_for(placeholder("src/a.py"), call_id)


def block(file: str, header: str, *lines: str) -> str:
    """A block exactly as OpenCode 1.18 formats it."""
    body = "\n".join(lines)
    return f'\n\nLSP errors detected in {header}:\n<diagnostics file="{file}">\n{body}\n</diagnostics>'


@pytest.fixture(scope="module")
def session(module_scenario_factory) -> dict[str, Any]:
    sc = module_scenario_factory("diagnostics", [])
    project = sc.opencode.project
    a, b = str(project / "src" / "a.py"), str(project / "src" / "b.py")
    sc.provider.script = [
        ToolCall("write", {"filePath": a, "content": A_CONTENT}),
        ToolCall("write", {"filePath": b, "content": B_CONTENT}),
        ToolCall("edit", {"filePath": a, "oldString": "ERROR-HERE", "newString": "fine", "replaceAll": True}),
        Text("Wrote both files and fixed a.py."),
    ]
    sc.opencode.extra_config["lsp"] = {"fake": {"command": [sys.executable, str(FAKE_LSP)], "extensions": [".py"]}}
    (project / "opencode.json").write_text(json.dumps(sc.opencode.config(), indent=2))
    installed = install_plugin(project)
    assert installed.returncode == 0, installed.stderr
    # Every decision written at once: what is cut, request by request.
    (project / ".opencode" / "dcp.jsonc").write_text('{"cache": {"scheduler": false}}\n')
    run = sc.opencode.run(["write", "a.py", "and", "b.py,", "then", "fix", "a.py"], timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    agent = [r for r in sc.provider.requests if r.get("tools")]
    a_errors = block(
        a, "this file, please fix", "ERROR [2:5] marked line 2 is an error", "ERROR [4:5] marked line 4 is an error"
    )
    a_others = block(a, "other files", "ERROR [2:5] marked line 2 is an error", "ERROR [4:5] marked line 4 is an error")
    b_errors = block(b, "this file, please fix", "ERROR [1:8] marked line 1 is an error")
    return {
        "requests": [results_by_call(r) for r in agent],
        "exported": sc.opencode.export(run.session_id or ""),
        "a_errors": a_errors,
        "a_others": a_others,
        "b_errors": b_errors,
    }


def test_the_language_server_reports_into_write_results(session):
    # The request right after the first write: its result carries a.py's block, untouched (newest).
    assert session["requests"][1]["call_1"] == WROTE + session["a_errors"]


def test_an_older_block_reaches_the_provider_cut_once_a_newer_result_reports_the_file(session):
    after_b = session["requests"][2]
    assert after_b["call_1"] == WROTE + a_gone("call_1")
    assert after_b["call_2"] == WROTE + session["a_others"] + session["b_errors"]


def test_a_fix_reported_without_errors_cuts_the_last_block_for_the_file_and_keeps_the_others(session):
    after_fix = session["requests"][3]
    assert after_fix == {
        "call_1": WROTE + a_gone("call_1"),
        "call_2": WROTE + a_gone("call_2") + session["b_errors"],
        "call_3": "Edit applied successfully.",
    }


def test_the_stored_history_keeps_every_block(session):
    outputs = [p["state"]["output"] for p in export_tool_parts(session["exported"])]
    assert outputs == [
        WROTE + session["a_errors"],
        WROTE + session["a_others"] + session["b_errors"],
        "Edit applied successfully.",
    ]
