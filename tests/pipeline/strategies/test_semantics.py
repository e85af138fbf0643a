"""Strategy semantics, one behaviour per test (README "What it prunes"; docs/ARCHITECTURE.md, step 5)."""

from __future__ import annotations

import pytest

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, FAILED_INPUT_PLACEHOLDER, SUPERSEDED_PLACEHOLDER
from dcp_plugin.pipeline.session import build_strategies
from dcp_plugin.pipeline.strategies import DEDUPLICATION, PURGE_ERRORS, acts_with_time
from dcp_plugin.pipeline.strategies.base import ObserveOnly, Progress
from tests.support.helpers import PROJECT, assistant, call, make_config, named, tool_part, tool_parts, user

BIG = "line of file content\n" * 50
SUPERSEDE_ON = {"strategies": {"supersedeWrites": {"enabled": True}}}


def outputs(messages):
    return [p["state"].get("output") for p in tool_parts(messages)]


def test_dedup_prunes_older_identical_read_keeps_newest(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    assert outputs(prune(msgs)) == [named(DUPLICATE_PLACEHOLDER, msgs[1]), BIG]


def test_dedup_ignores_key_order_and_nulls(prune):
    msgs = [
        user(),
        call("grep", {"pattern": "x", "path": "/p", "include": None}, output=BIG),
        call("grep", {"path": "/p", "pattern": "x"}, output=BIG),
    ]
    assert outputs(prune(msgs))[0] == named(DUPLICATE_PLACEHOLDER, msgs[1])


def test_dedup_ignores_nulls_and_key_order_at_depth(prune):
    msgs = [
        user(),
        call("search", {"q": {"a": 1, "b": None, "c": {"y": 2, "x": None}}}, output=BIG),
        call("search", {"q": {"c": {"y": 2}, "a": 1}}, output=BIG),
    ]
    assert outputs(prune(msgs))[0] == named(DUPLICATE_PLACEHOLDER, msgs[1])


def test_dedup_different_inputs_are_not_duplicates(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py", "offset": 5}, output=BIG)]
    assert outputs(prune(msgs)) == [BIG, BIG]


def test_dedup_newer_running_duplicate_does_not_prune(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, status="running")]
    assert outputs(prune(msgs))[0] == BIG


def test_dedup_newer_pending_duplicate_does_not_prune(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, status="pending")]
    assert outputs(prune(msgs))[0] == BIG


def test_dedup_newer_errored_duplicate_does_not_prune(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, status="error")]
    assert outputs(prune(msgs))[0] == BIG


def test_dedup_keeps_newest_completed_when_newest_call_errored(prune):
    msgs = [
        user(),
        call("read", {"filePath": "/p/a.py"}, output=BIG),
        call("read", {"filePath": "/p/a.py"}, output=BIG),
        call("read", {"filePath": "/p/a.py"}, status="error"),
    ]
    assert outputs(prune(msgs))[:2] == [named(DUPLICATE_PLACEHOLDER, msgs[1]), BIG]


def test_dedup_never_prunes_hardcoded_protected_tools(prune):
    msgs = [user(), call("task", {"prompt": "p"}, output=BIG), call("task", {"prompt": "p"}, output=BIG)]
    assert outputs(prune(msgs)) == [BIG, BIG]


def test_dedup_config_adds_protected_tool(prune):
    msgs = [user(), call("bash", {"command": "ls"}, output=BIG), call("bash", {"command": "ls"}, output=BIG)]
    config = make_config(strategies={"deduplication": {"protectedTools": ["bash"]}})
    assert outputs(prune(msgs, config)) == [BIG, BIG]


def test_dedup_config_cannot_unprotect_hardcoded_tools(prune):
    msgs = [user(), call("todoread", {}, output=BIG), call("todoread", {}, output=BIG)]
    config = make_config(strategies={"deduplication": {"protectedTools": []}})
    assert outputs(prune(msgs, config)) == [BIG, BIG]


def test_dedup_disabled_prunes_nothing(prune):
    msgs = [user(), call("bash", {"command": "ls"}, output=BIG), call("bash", {"command": "ls"}, output=BIG)]
    assert outputs(prune(msgs, make_config(strategies={"deduplication": {"enabled": False}}))) == [BIG, BIG]


def test_dedup_keeps_output_shorter_than_placeholder(prune):
    msgs = [user(), call("bash", {"command": "true"}, output="ok"), call("bash", {"command": "true"}, output="ok")]
    assert outputs(prune(msgs)) == ["ok", "ok"]


def test_supersede_is_off_by_default(prune):
    msgs = [user(), call("write", {"filePath": "/p/a.py", "content": BIG}), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    assert tool_parts(prune(msgs))[0]["state"]["input"]["content"] == BIG


def test_supersede_replaces_write_content_read_later(prune):
    msgs = [user(), call("write", {"filePath": "/p/a.py", "content": BIG}), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    state = tool_parts(prune(msgs, make_config(**SUPERSEDE_ON)))[0]["state"]
    assert state["input"] == {"filePath": "/p/a.py", "content": named(SUPERSEDED_PLACEHOLDER, msgs[1])}


def test_supersede_keeps_write_output(prune):
    msgs = [user(), call("write", {"filePath": "/p/a.py", "content": BIG}, output="Wrote the file " * 10), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    assert tool_parts(prune(msgs, make_config(**SUPERSEDE_ON)))[0]["state"]["output"] == "Wrote the file " * 10


def test_supersede_matches_relative_write_and_absolute_read(prune):
    msgs = [user(), call("write", {"filePath": "./a.py", "content": BIG}), call("read", {"filePath": f"{PROJECT}/a.py"}, output=BIG)]
    assert tool_parts(prune(msgs, make_config(**SUPERSEDE_ON)))[0]["state"]["input"]["content"] == named(SUPERSEDED_PLACEHOLDER, msgs[1])


def written_then_read(read_input, content=BIG, output=BIG):
    """A write of /p/a.py (BIG has 50 lines) and a later read of it."""
    write = call("write", {"filePath": "/p/a.py", "content": content})
    return [user(), write, call("read", {"filePath": "/p/a.py", **read_input}, output=output)]


def content_after(prune, msgs):
    return tool_parts(prune(msgs, make_config(**SUPERSEDE_ON)))[0]["state"]["input"]["content"]


def test_supersede_ignores_a_read_of_a_few_lines_in_the_middle(prune):
    assert content_after(prune, written_then_read({"offset": 50, "limit": 5})) == BIG


def test_supersede_ignores_a_read_from_line_one_that_stops_before_the_last_written_line(prune):
    assert content_after(prune, written_then_read({"limit": 49})) == BIG


def test_supersede_counts_a_limit_that_covers_every_written_line(prune):
    msgs = written_then_read({"limit": 50})
    assert content_after(prune, msgs) == named(SUPERSEDED_PLACEHOLDER, msgs[1])


def test_supersede_reads_offset_one_and_offset_zero_as_the_first_line(prune):
    # OpenCode's read: offset is the 1-based first line; 0 (or none) starts at line 1 too.
    msgs = written_then_read({"offset": 1, "limit": 2000})
    assert content_after(prune, msgs) == named(SUPERSEDED_PLACEHOLDER, msgs[1])
    msgs = written_then_read({"offset": 0})
    assert content_after(prune, msgs) == named(SUPERSEDED_PLACEHOLDER, msgs[1])


def test_supersede_ignores_a_read_past_the_first_line(prune):
    assert content_after(prune, written_then_read({"offset": 2, "limit": 2000})) == BIG


def test_supersede_ignores_a_full_read_of_more_lines_than_the_default_limit(prune):
    long = "line\n" * 2001
    assert content_after(prune, written_then_read({}, content=long)) == long


def test_supersede_ignores_a_read_the_host_capped(prune):
    capped = BIG[:100] + "\n\n(Output capped at 50 KB. Showing lines 1-3. Use offset=4 to continue.)"
    assert content_after(prune, written_then_read({}, output=capped)) == BIG


def test_supersede_ignores_a_read_with_a_truncated_line(prune):
    cut = "1: " + "x" * 2000 + "... (line truncated to 2000 chars)"
    assert content_after(prune, written_then_read({}, output=cut)) == BIG


def test_dedup_ignores_the_bash_description(prune):
    msgs = [
        user(),
        call("bash", {"command": "pytest -q", "description": "Run the tests"}, output=BIG),
        call("bash", {"command": "pytest -q", "description": "Run the tests again"}, output=BIG),
    ]
    assert outputs(prune(msgs)) == [named(DUPLICATE_PLACEHOLDER, msgs[1]), BIG]


def test_dedup_still_tells_different_commands_apart(prune):
    msgs = [
        user(),
        call("bash", {"command": "pytest -q", "description": "x"}, output=BIG),
        call("bash", {"command": "pytest", "description": "x"}, output=BIG),
    ]
    assert outputs(prune(msgs)) == [BIG, BIG]


def test_dedup_ignore_fields_set_in_config_replace_the_default(prune):
    msgs = [
        user(),
        call("bash", {"command": "ls", "description": "a"}, output=BIG),
        call("bash", {"command": "ls", "description": "b"}, output=BIG),
        call("grep", {"pattern": "x", "why": "one"}, output=BIG),
        call("grep", {"pattern": "x", "why": "two"}, output=BIG),
    ]
    config = make_config(strategies={"deduplication": {"ignoreFields": {"grep": ["why"]}}})
    assert outputs(prune(msgs, config)) == [BIG, BIG, named(DUPLICATE_PLACEHOLDER, msgs[3]), BIG]


def test_supersede_ignores_read_before_write(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("write", {"filePath": "/p/a.py", "content": BIG})]
    assert tool_parts(prune(msgs, make_config(**SUPERSEDE_ON)))[1]["state"]["input"]["content"] == BIG


def test_supersede_ignores_read_of_other_file(prune):
    msgs = [user(), call("write", {"filePath": "/p/a.py", "content": BIG}), call("read", {"filePath": "/p/b.py"}, output=BIG)]
    assert tool_parts(prune(msgs, make_config(**SUPERSEDE_ON)))[0]["state"]["input"]["content"] == BIG


def test_supersede_ignores_failed_read(prune):
    msgs = [user(), call("write", {"filePath": "/p/a.py", "content": BIG}), call("read", {"filePath": "/p/a.py"}, status="error")]
    assert tool_parts(prune(msgs, make_config(**SUPERSEDE_ON)))[0]["state"]["input"]["content"] == BIG


def test_purge_keeps_input_at_age_turns_minus_one(prune):
    bad = {"command": "x" * 300}
    msgs = [user(), call("bash", bad, status="error")] + [user() for _ in range(3)]
    assert tool_parts(prune(msgs))[0]["state"]["input"] == bad


def test_purge_replaces_input_at_age_turns(prune):
    msgs = [user(), call("bash", {"command": "x" * 300}, status="error")] + [user() for _ in range(4)]
    assert tool_parts(prune(msgs))[0]["state"]["input"] == {"command": named(FAILED_INPUT_PLACEHOLDER, msgs[1])}


def test_purge_keeps_the_error_message(prune):
    msgs = [user(), call("bash", {"command": "x" * 300}, status="error", error="boom: exit 2")] + [user() for _ in range(4)]
    assert tool_parts(prune(msgs))[0]["state"]["error"] == "boom: exit 2"


def test_purge_replaces_nested_strings_and_keeps_other_values(prune):
    nested = {"script": {"lines": ["a" * 100, "short"], "n": 3, "flag": True}, "cwd": "b" * 120}
    msgs = [user(), call("runner", nested, status="error")] + [user() for _ in range(4)]
    assert tool_parts(prune(msgs))[0]["state"]["input"] == {
        "script": {"lines": [named(FAILED_INPUT_PLACEHOLDER, msgs[1]), "short"], "n": 3, "flag": True},
        "cwd": named(FAILED_INPUT_PLACEHOLDER, msgs[1]),
    }


def test_purge_turns_from_config(prune):
    msgs = [user(), call("bash", {"command": "x" * 300}, status="error"), user()]
    config = make_config(strategies={"purgeErrors": {"turns": 1}})
    assert tool_parts(prune(msgs, config))[0]["state"]["input"] == {"command": named(FAILED_INPUT_PLACEHOLDER, msgs[1])}


def test_purge_counts_user_turns_not_steps(prune):
    msgs = [user(), call("bash", {"command": "x" * 300}, status="error")] + [call("read", {"filePath": f"/p/{i}"}) for i in range(10)]
    assert tool_parts(prune(msgs))[0]["state"]["input"] == {"command": "x" * 300}


def test_purge_never_touches_protected_tools(prune):
    bad = {"filePath": "/p/a.py", "oldString": "y" * 300, "newString": "z" * 300}
    msgs = [user(), call("edit", bad, status="error")] + [user() for _ in range(6)]
    assert tool_parts(prune(msgs))[0]["state"]["input"] == bad


def test_purge_config_adds_protected_tool(prune):
    bad = {"command": "x" * 300}
    msgs = [user(), call("bash", bad, status="error")] + [user() for _ in range(6)]
    assert tool_parts(prune(msgs, make_config(strategies={"purgeErrors": {"protectedTools": ["bash"]}})))[0]["state"]["input"] == bad


def test_protected_path_blocks_dedup(prune):
    msgs = [user(), call("read", {"filePath": f"{PROJECT}/src/a.py"}, output=BIG), call("read", {"filePath": f"{PROJECT}/src/a.py"}, output=BIG)]
    assert outputs(prune(msgs, make_config(protectedFilePatterns=["src/**"]))) == [BIG, BIG]


def test_protected_path_blocks_supersede(prune):
    msgs = [user(), call("write", {"filePath": "src/a.py", "content": BIG}), call("read", {"filePath": f"{PROJECT}/src/a.py"}, output=BIG)]
    config = make_config(protectedFilePatterns=["src/**"], **SUPERSEDE_ON)
    assert tool_parts(prune(msgs, config))[0]["state"]["input"]["content"] == BIG


def test_protected_path_blocks_purge(prune):
    bad = {"filePath": f"{PROJECT}/.env", "extra": "q" * 300}
    msgs = [user(), call("read", bad, status="error")] + [user() for _ in range(5)]
    assert tool_parts(prune(msgs, make_config(protectedFilePatterns=["*.env"])))[0]["state"]["input"] == bad


def test_protected_path_sees_through_dotdot(prune):
    path = f"{PROJECT}/lib/../src/a.py"
    msgs = [user(), call("read", {"filePath": path}, output=BIG), call("read", {"filePath": path}, output=BIG)]
    assert outputs(prune(msgs, make_config(protectedFilePatterns=["src/**"]))) == [BIG, BIG]


def test_protected_path_sees_through_double_slash(prune):
    path = f"{PROJECT}//src//a.py"
    msgs = [user(), call("read", {"filePath": path}, output=BIG), call("read", {"filePath": path}, output=BIG)]
    assert outputs(prune(msgs, make_config(protectedFilePatterns=["src/**"]))) == [BIG, BIG]


def test_protected_path_in_apply_patch_text(prune):
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n" + "+x\n" * 200 + "*** End Patch"
    msgs = [user(), call("apply_patch", {"patchText": patch}, status="error")] + [user() for _ in range(5)]
    assert tool_parts(prune(msgs, make_config(protectedFilePatterns=["src/**"])))[0]["state"]["input"]["patchText"] == patch


def test_protected_path_in_multiedit_edits(prune):
    inp = {"edits": [{"filePath": "docs/x.md", "oldString": "o" * 200, "newString": "n"}, {"filePath": "src/b.py", "oldString": "p" * 200, "newString": "m"}]}
    msgs = [user(), call("multiedit", inp, status="error")] + [user() for _ in range(5)]
    assert tool_parts(prune(msgs, make_config(protectedFilePatterns=["src/b.py"])))[0]["state"]["input"] == inp


def test_unprotected_path_outside_pattern_is_pruned(prune):
    msgs = [user(), call("read", {"filePath": f"{PROJECT}/lib/a.py"}, output=BIG), call("read", {"filePath": f"{PROJECT}/lib/a.py"}, output=BIG)]
    assert outputs(prune(msgs, make_config(protectedFilePatterns=["src/**"])))[0] == named(DUPLICATE_PLACEHOLDER, msgs[1])


def test_turn_protection_keeps_young_duplicates(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, output=BIG), user()]
    config = make_config(turnProtection={"enabled": True, "turns": 2})
    assert outputs(prune(msgs, config))[0] == BIG


def test_turn_protection_releases_old_enough_duplicates(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, output=BIG), user(), user()]
    config = make_config(turnProtection={"enabled": True, "turns": 2})
    assert outputs(prune(msgs, config))[0] == named(DUPLICATE_PLACEHOLDER, msgs[1])


def test_disabled_plugin_changes_nothing(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    assert prune(msgs, make_config(enabled=False)) == msgs


def test_every_call_keeps_a_result(prune):
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, output=BIG),
            call("bash", {"command": "c" * 200}, status="error")] + [user() for _ in range(5)]
    for part in tool_parts(prune(msgs)):
        state = part["state"]
        assert ("output" in state) if state["status"] == "completed" else ("error" in state)


def test_two_calls_in_one_message_are_both_indexed(prune):
    msgs = [user(), assistant(tool_part("read", {"filePath": "/p/a.py"}, output=BIG), tool_part("read", {"filePath": "/p/a.py"}, output=BIG))]
    assert outputs(prune(msgs)) == [named(DUPLICATE_PLACEHOLDER, msgs[1]["parts"][0]), BIG]


@pytest.mark.plain_python  # replaces a compiled function: see tests/conftest.py
def test_a_strategy_acts_with_time_unless_its_advance_is_the_observe_only_one() -> None:
    class Timed(ObserveOnly):
        def advance(self, progress: Progress) -> list:
            return []

    built = dict(build_strategies(DcpConfig()))
    assert acts_with_time(Timed()) and acts_with_time(built[PURGE_ERRORS])
    assert not acts_with_time(built[DEDUPLICATION]) and not acts_with_time(ObserveOnly())
