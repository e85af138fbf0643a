"""The safe profile: past the trigger, old command output goes and every file view stays, whatever its cycle."""

from __future__ import annotations

import copy

from dcp_plugin.host.runtime import Runtime, StaticConfig
from tests.support.helpers import PROJECT, call, hook_transform, make_config, tool_parts, user

KB = "x" * 3000  # 1,000 tokens as a tool output (chars / 3)


def test_the_safe_profile_masks_old_command_output_and_keeps_every_file_view():
    old_cycles = [m for i in range(8) for m in (user(), call("read", {"filePath": f"{PROJECT}/src/f{i}.py"}, output=KB))]
    messages = [*old_cycles, call("bash", {"command": "ls -R"}, output=KB), user(), *(
        call("grep", {"pattern": f"p{i}"}, output="y" * 30) for i in range(4))]
    config = make_config(profile="safe", strategies={"maskOldOutputs": {"trigger": 1000}})
    out = copy.deepcopy(messages)
    hook_transform(Runtime(PROJECT, StaticConfig(config)), {}, {"messages": out})
    found = [p["state"]["output"] for p in tool_parts(out)]
    assert found[:8] == [KB] * 8
    assert found[8].startswith("[dcp: old output of bash")
