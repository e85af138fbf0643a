"""staleDiagnostics: an older diagnostics block is cut once a newer result covers its file; the rest stays."""

from __future__ import annotations

import copy
from typing import Any

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from dcp_plugin.pipeline.strategies.stale_diagnostics import placeholder
from tests.support.helpers import (
    PROJECT,
    SESSION,
    call,
    diagnostics,
    hook_transform,
    make_config,
    named,
    tool_parts,
    user,
)

A = f"{PROJECT}/src/a.py"
B = f"{PROJECT}/src/b.py"
WROTE = "Wrote file successfully."
EDITED = "Edit applied successfully."
A_ERRORS = diagnostics(A, 'ERROR [3:1] "x" is not defined', "ERROR [9:5] Expected indented block")
B_ERRORS = diagnostics(B, 'ERROR [1:8] Import "nope" could not be resolved', header="other files")


def write(path: str, output: str) -> dict[str, Any]:
    return call("write", {"filePath": path, "content": "print(x)\n"}, output=output)


def edit(path: str, output: str) -> dict[str, Any]:
    return call("edit", {"filePath": path, "oldString": "x", "newString": "y"}, output=output)


def outputs(messages: list[dict[str, Any]], config: Any = None) -> list[Any]:
    runtime = Runtime(PROJECT, StaticConfig(config or make_config()))
    out = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": out})
    return [p["state"].get("output") for p in tool_parts(out)]


def cut(header_and_block: str, file: str, message: dict[str, Any]) -> str:
    """What a cut block with its header leaves in ``message``'s call: the blank line and one line naming the file."""
    assert header_and_block.startswith("\n\n")
    return named("\n\n" + placeholder(file), message)


def test_an_older_block_is_cut_once_a_newer_result_reports_the_same_file():
    msgs = [user(), write(A, WROTE + A_ERRORS), user(), edit(A, EDITED + A_ERRORS)]
    assert outputs(msgs)[0] == WROTE + cut(A_ERRORS, "src/a.py", msgs[1])


def test_the_newest_block_for_a_file_stays():
    msgs = [user(), write(A, WROTE + A_ERRORS), user(), edit(A, EDITED + A_ERRORS)]
    assert outputs(msgs)[1] == EDITED + A_ERRORS


def test_a_block_for_a_file_no_newer_result_mentions_stays():
    msgs = [user(), write(A, WROTE + A_ERRORS + B_ERRORS), user(), edit(A, EDITED + A_ERRORS)]
    assert outputs(msgs)[0] == WROTE + cut(A_ERRORS, "src/a.py", msgs[1]) + B_ERRORS


def test_a_newer_write_of_the_file_without_errors_makes_its_old_block_stale():
    msgs = [user(), write(A, WROTE + A_ERRORS), user(), edit(A, EDITED)]
    assert outputs(msgs) == [WROTE + cut(A_ERRORS, "src/a.py", msgs[1]), EDITED]


def test_a_newer_write_of_another_file_without_errors_changes_nothing():
    msgs = [user(), write(A, WROTE + A_ERRORS), user(), write(B, WROTE)]
    assert outputs(msgs)[0] == WROTE + A_ERRORS


def test_a_newer_read_of_the_file_is_not_a_report_on_it():
    msgs = [user(), write(A, WROTE + A_ERRORS), user(), call("read", {"filePath": A}, output="1: print(x)")]
    assert outputs(msgs)[0] == WROTE + A_ERRORS


def test_blocks_that_grow_stale_at_different_times_are_all_cut():
    msgs = [user(), write(A, WROTE + A_ERRORS + B_ERRORS), user(), edit(A, EDITED), user(), edit(B, EDITED)]
    assert outputs(msgs)[0] == WROTE + cut(A_ERRORS, "src/a.py", msgs[1]) + cut(B_ERRORS, "src/b.py", msgs[1])


def test_a_later_cut_replaces_the_earlier_decision_with_both_cuts():
    msgs = [user(), write(A, WROTE + A_ERRORS + B_ERRORS), user(), edit(A, EDITED), user(), edit(B, EDITED)]
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    hook_transform(runtime, {}, {"messages": copy.deepcopy(msgs)})
    view = runtime.view(SESSION)
    assert view is not None
    (decision,) = view.in_force
    assert decision.strategy == "staleDiagnostics" and decision.cuts is not None and len(decision.cuts) == 2


def test_apply_patch_blocks_and_its_report_of_a_clean_file_count_too():
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** End Patch"
    header = diagnostics(A, "ERROR [2:1] bad", header="src/a.py, please fix")
    first = call(
        "apply_patch", {"patchText": patch}, output="Success. Updated the following files:\nM src/a.py" + header
    )
    second = call(
        "apply_patch",
        {"patchText": patch.replace("+y", "+z")},
        output="Success. Updated the following files:\nM src/a.py",
    )
    assert outputs([user(), first, user(), second])[0] == "Success. Updated the following files:\nM src/a.py" + cut(
        header, "src/a.py", first
    )


def test_blocks_in_any_other_tool_output_are_cut_without_a_header():
    block = f'<diagnostics file="{A}">\nERROR [3:1] "x" is not defined\nERROR [4:1] "y" is not defined\n</diagnostics>'
    first = call("lsp_check", {"path": A}, output="checked\n" + block)
    msgs = [user(), first, user(), edit(A, EDITED + A_ERRORS)]
    assert outputs(msgs)[0] == "checked\n" + named(placeholder("src/a.py"), first)


def test_a_block_shorter_than_its_placeholder_stays():
    tiny = '<diagnostics file="/x">\nE\n</diagnostics>'
    msgs = [user(), call("check", {"path": "/x"}, output="ok " * 40 + tiny), user(), edit("/x", EDITED)]
    assert outputs(msgs)[0] == "ok " * 40 + tiny


def test_blocks_of_a_protected_path_stay():
    msgs = [user(), write(A, WROTE + A_ERRORS), user(), edit(A, EDITED + A_ERRORS)]
    assert outputs(msgs, make_config(protectedFilePatterns=["src/a.py"]))[0] == WROTE + A_ERRORS


def test_turned_off_it_cuts_nothing():
    msgs = [user(), write(A, WROTE + A_ERRORS), user(), edit(A, EDITED + A_ERRORS)]
    assert outputs(msgs, make_config(strategies={"staleDiagnostics": {"enabled": False}}))[0] == WROTE + A_ERRORS


def test_a_cut_gives_way_to_a_whole_placeholder_made_later():
    run = call("bash", {"command": "make check"}, output="checked\n" + A_ERRORS.strip("\n"))
    again = call("bash", {"command": "make check"}, output="checked\n" + A_ERRORS.strip("\n"))
    msgs = [user(), run, user(), edit(A, EDITED), user(), again]
    assert outputs(msgs)[0] == named(DUPLICATE_PLACEHOLDER, run)
