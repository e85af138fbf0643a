"""restore of a read longer than OpenCode's cap on a tool's result, in the real OpenCode: parts, none cut by the host.

OpenCode 1.18 keeps at most 50 KB of a tool's result and ends a longer one with its own notice.
The scripted model reads a file whose numbered read is over 50 KB, discards it, then restores it
part by part; the provider's requests show each part whole, and the parts add up to the read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dcp_plugin.pipeline.ids import short_id
from tests.e2e.fake_provider import Text, ToolCall
from tests.e2e.opencode_harness import results_by_call
from tests.e2e.test_e2e_bridge import install_plugin

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HOST_CAP_BYTES = 51_200
READ, FIRST, SECOND = "call_1", "call_3", "call_4"


@pytest.fixture(scope="module")
def run(module_scenario_factory) -> dict[str, Any]:
    sc = module_scenario_factory("restore-parts", [])
    project = sc.opencode.project
    path = project / "big.txt"
    path.write_text("".join(f"row {n:04d} of the large file\n" for n in range(1, 1_901)))
    sc.provider.script = [
        ToolCall("read", {"filePath": str(path)}),
        ToolCall("discard", {"ids": [short_id(READ)], "reason": "done"}),
        ToolCall("restore", {"ids": [short_id(READ)], "part": 1}),
        ToolCall("restore", {"ids": [short_id(READ)], "part": 2}),
        Text("Read it back."),
    ]
    installed = install_plugin(project)
    assert installed.returncode == 0, installed.stderr
    (project / ".opencode" / "dcp.jsonc").write_text(json.dumps({"cache": {"scheduler": False}}))
    result = sc.opencode.run(["read", "big.txt", "and", "restore", "it"], timeout=180)
    return {"result": result, "requests": sc.provider.agent_requests()}


def test_the_read_is_longer_than_opencodes_cap(run):
    assert run["result"].returncode == 0, run["result"].stderr[-2000:]
    read = results_by_call(run["requests"][1])[READ]
    assert len(read.encode()) > HOST_CAP_BYTES, len(read.encode())


def test_each_part_reaches_the_model_whole_and_under_the_cap(run):
    results = results_by_call(run["requests"][-1])
    for call in (FIRST, SECOND):
        assert len(results[call].encode()) < HOST_CAP_BYTES
        assert "truncated" not in results[call].lower()
    assert "part 1 of 2" in results[FIRST] and "this is the last part" in results[SECOND]


def test_the_parts_add_up_to_the_read(run):
    read = results_by_call(run["requests"][1])[READ]
    results = results_by_call(run["requests"][-1])
    joined = "".join(results[call].split("\n", 1)[1] for call in (FIRST, SECOND))
    assert read in joined
