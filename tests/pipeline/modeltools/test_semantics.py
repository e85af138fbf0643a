"""What discard, extract and restore do, and every reason a call is refused."""

from __future__ import annotations

import copy

import pytest

from dcp_plugin.adapters.formats.kinds import Kind, placeholder_kind
from dcp_plugin.pipeline.placeholders import (
    DISCARDED_PLACEHOLDERS,
    DUPLICATE_PLACEHOLDER,
    FAILED_INPUT_PLACEHOLDER,
    SUMMARY_HEADER,
)
from tests.support.helpers import PROJECT, call, named, tool_parts, user
from tests.support.tools_helpers import BIG, ToolHost, ident


def two_reads() -> tuple[ToolHost, str, str]:
    host = ToolHost.start().add(user("look at a and b"))
    return host, host.read("a.py", BIG + "a"), host.read("b.py", BIG + "b")


# -- discard ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["noise", "done"])
def test_discard_replaces_each_output_by_a_placeholder_naming_its_id(reason: str) -> None:
    host, a, b = two_reads()
    result = host.use("discard", {"ids": [a, b], "reason": reason})
    assert not result.error
    host.request()
    assert host.outputs()[:2] == [named(DISCARDED_PLACEHOLDERS[reason], host.messages[1]), named(DISCARDED_PLACEHOLDERS[reason], host.messages[2])]


def test_discard_says_what_it_removed_by_id_and_call() -> None:
    host, a, b = two_reads()
    result = host.use("discard", {"ids": [a], "reason": "done"})
    assert result.output.startswith("Discarded 1 output (~") and f"{a} read a.py" in result.output


def test_discard_never_changes_the_stored_history() -> None:
    host, a, _ = two_reads()
    stored = copy.deepcopy(host.messages)
    host.use("discard", {"ids": [a], "reason": "noise"})
    host.request()
    assert host.messages[: len(stored)] == stored


def test_a_discarded_output_is_a_typed_placeholder() -> None:
    host, a, _ = two_reads()
    host.use("discard", {"ids": [a], "reason": "noise"})
    assert placeholder_kind(host.outputs(host.request())[0]) is Kind.PLACEHOLDER_DISCARDED


def test_ids_are_read_as_the_model_may_write_them() -> None:
    host, a, b = two_reads()
    result = host.use("discard", {"ids": f"#{a.upper()}, id {b}", "reason": "noise"})
    assert not result.error, result.output
    assert host.outputs(host.request())[:2] != [BIG + "a", BIG + "b"]


# -- extract ----------------------------------------------------------------------------------


def test_extract_keeps_the_distillation_in_place_of_the_output() -> None:
    host, a, _ = two_reads()
    result = host.use("extract", {"ids": [a], "distillation": ["a.py: 40 lines, nothing about auth"]})
    assert not result.error, result.output
    [summary] = host.outputs(host.request())[:1]
    assert summary == named(SUMMARY_HEADER, host.messages[1]) + "\na.py: 40 lines, nothing about auth"
    assert placeholder_kind(summary) is Kind.EXTRACTED_SUMMARY


def test_no_strategy_replaces_an_extracted_summary() -> None:
    host, a, _ = two_reads()
    host.use("extract", {"ids": [a], "distillation": ["the facts"]})
    host.read("a.py", BIG + "a")  # the same call again: deduplication would prune the older output
    assert host.outputs(host.request())[0].endswith("\nthe facts")


def test_extract_takes_the_distillations_by_id_too() -> None:
    host, a, b = two_reads()
    result = host.use("extract", {"ids": [a, b], "distillation": {b: "facts of b", a: "facts of a"}})
    assert not result.error, result.output
    assert [o.split("\n")[-1] for o in host.outputs(host.request())[:2]] == ["facts of a", "facts of b"]


# -- restore ----------------------------------------------------------------------------------


def test_restore_returns_a_discarded_output_as_its_own_result() -> None:
    host, a, _ = two_reads()
    host.use("discard", {"ids": [a], "reason": "done"})
    result = host.use("restore", {"ids": [a]})
    assert not result.error
    assert (BIG + "a") in result.output and result.output.startswith("Restored 1 output")


def test_restore_returns_what_an_automatic_strategy_removed() -> None:
    host = ToolHost.start().add(user())
    first = host.read("a.py", BIG)
    host.read("a.py", BIG)
    assert host.outputs(host.request())[0] == named(DUPLICATE_PLACEHOLDER, host.messages[1])
    result = host.use("restore", {"ids": [first]})
    assert not result.error and BIG in result.output and "pruned by deduplication" in result.output


def test_restore_returns_an_input_purged_after_a_failure() -> None:
    host = ToolHost.start().add(user(), call("bash", {"command": "make " + "x" * 300}, status="error"))
    host.add(*[user() for _ in range(4)])
    assert tool_parts(host.request())[0]["state"]["input"] == {"command": named(FAILED_INPUT_PLACEHOLDER, host.messages[1])}
    result = host.use("restore", {"ids": [ident(host.messages[1])]})
    assert "make " + "x" * 300 in result.output and "(input, pruned by purgeErrors)" in result.output


def test_restore_leaves_the_placeholder_where_it_is() -> None:
    host, a, _ = two_reads()
    host.use("discard", {"ids": [a], "reason": "done"})
    before = host.request()
    host.use("restore", {"ids": [a]})
    after = host.request()
    assert after[: len(before)] == before
    assert BIG + "a" in host.outputs(after)[-1]


def test_restore_of_an_output_that_is_not_pruned_is_refused() -> None:
    host, a, _ = two_reads()
    result = host.use("restore", {"ids": [a]})
    assert result.error and f"{a} (read a.py): not pruned" in result.output


def test_restore_brings_back_what_it_can_and_names_the_rest() -> None:
    host, a, b = two_reads()
    host.use("discard", {"ids": [a], "reason": "done"})
    result = host.use("restore", {"ids": [a, b]})
    assert not result.error
    assert BIG + "a" in result.output and f"Not restored:\n- {b} (read b.py): not pruned" in result.output


def test_restore_refuses_when_the_host_sends_the_pruned_copy() -> None:
    host, a, _ = two_reads()
    host.use("discard", {"ids": [a], "reason": "done"})
    pruned_copy = host.request()
    result = host.runtime.execute_tool("ses_test", "restore", {"ids": [a]}, pruned_copy, call_id="call_r")
    assert result is not None and result.error and "the host sent the pruned copy" in result.output


# -- refusals ---------------------------------------------------------------------------------


def test_an_unknown_id_is_refused_with_the_valid_ids() -> None:
    host, a, b = two_reads()
    host.read("c.py", BIG + "c")
    result = host.use("discard", {"ids": ["zzzz"], "reason": "noise"})
    assert result.error
    assert "zzzz: no tool output has this id" in result.output
    assert "Valid ids of prunable outputs now: " in result.output and a in result.output and b in result.output


def test_a_call_cannot_name_an_output_of_its_own_step() -> None:
    host, a, _ = two_reads()
    host.request()
    later = call("read", {"filePath": f"{PROJECT}/c.py"}, output=BIG)
    host.add(later)
    result = host.runtime.execute_tool("ses_test", "discard", {"ids": [ident(later)], "reason": "noise"}, host.messages[:-1], call_id="x1")
    assert result is not None and result.error and "no tool output has this id" in result.output


def test_a_protected_tool_is_refused() -> None:
    host = ToolHost.start().add(user(), call("task", {"prompt": "explore"}, output=BIG))
    result = host.use("discard", {"ids": [ident(host.messages[1])], "reason": "done"})
    assert result.error and "task outputs are protected" in result.output


def test_a_tool_protected_in_the_config_is_refused() -> None:
    host = ToolHost.start(tools={"protectedTools": ["read"]}).add(user())
    a = host.read("a.py")
    assert "read outputs are protected" in host.use("discard", {"ids": [a], "reason": "done"}).output


def test_a_protected_file_is_refused() -> None:
    host = ToolHost.start(protectedFilePatterns=["secrets/**"]).add(user())
    a = host.read("secrets/key.txt")
    assert "a protected file" in host.use("discard", {"ids": [a], "reason": "noise"}).output


def test_an_output_younger_than_turn_protection_is_refused() -> None:
    host = ToolHost.start(turnProtection={"enabled": True, "turns": 2}).add(user())
    a = host.read("a.py")
    result = host.use("discard", {"ids": [a], "reason": "done"})
    assert result.error and "made in the last 2 user turns, which are protected" in result.output


def test_an_output_old_enough_for_turn_protection_is_pruned() -> None:
    host = ToolHost.start(turnProtection={"enabled": True, "turns": 2}).add(user())
    a = host.read("a.py")
    host.add(user(), user())
    assert not host.use("discard", {"ids": [a], "reason": "done"}).error


def test_an_output_already_pruned_is_refused() -> None:
    host = ToolHost.start().add(user())
    first = host.read("a.py", BIG)
    host.read("a.py", BIG)
    result = host.use("discard", {"ids": [first], "reason": "noise"})
    assert result.error and "already pruned (deduplication)" in result.output


def test_an_output_whose_prune_waits_for_the_cache_is_refused_as_already_pruned() -> None:
    host = ToolHost.start(cache={"scheduler": True}).add(user())
    first = host.read("a.py", BIG)
    for name in ("b.py", "c.py"):
        host.read(name)
        host.request()
    host.read("a.py", BIG)  # the duplicate is decided; writing it into the warm prefix does not pay yet
    result = host.use("discard", {"ids": [first], "reason": "noise"})
    assert result.error and "already pruned (deduplication; its placeholder is written when that pays)" in result.output


def test_a_failed_call_has_no_output_to_prune() -> None:
    host = ToolHost.start().add(user(), call("bash", {"command": "make"}, status="error"))
    result = host.use("discard", {"ids": [ident(host.messages[1])], "reason": "noise"})
    assert "the call failed, so it has no output" in result.output


def test_a_prune_smaller_than_min_tokens_is_refused() -> None:
    host = ToolHost.start(tools={"minTokens": 2000}).add(user())
    a = host.read("a.py")
    result = host.use("discard", {"ids": [a], "reason": "noise"})
    assert result.error and "less than a prune is worth (~2,000 tokens)" in result.output


def test_an_output_shorter_than_its_placeholder_is_refused() -> None:
    host = ToolHost.start().add(user())
    a = host.read("a.py", "ok")
    assert "already shorter than a placeholder" in host.use("discard", {"ids": [a], "reason": "noise"}).output


def test_a_distillation_as_long_as_the_output_is_refused() -> None:
    host = ToolHost.start().add(user())
    a = host.read("a.py", "short output of a file, but still above the size of the placeholders used here" * 2)
    result = host.use("extract", {"ids": [a], "distillation": ["x" * 400]})
    assert result.error and "the distillation is not shorter than the output" in result.output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"reason": "noise"}, "ids must be a list of ids"),
        ({"ids": [], "reason": "noise"}, "ids is empty"),
        ({"ids": [7], "reason": "noise"}, "ids[0] is not an id: 7"),
        ({"ids": ["0000"], "reason": "boring"}, "reason must be one of: noise, done"),
    ],
)
def test_malformed_discard_arguments_are_refused_saying_what_is_wrong(arguments: dict, message: str) -> None:
    host, _, _ = two_reads()
    result = host.use("discard", arguments)
    assert result.error and message in result.output


@pytest.mark.parametrize(
    ("distillation", "message"),
    [
        (["one"], "distillation must hold one entry per id, in the same order (1 for 2 ids)"),
        (["one", "  "], "is empty: write the facts to keep, or use discard"),
    ],
)
def test_malformed_distillations_are_refused_saying_what_is_wrong(distillation: list[str], message: str) -> None:
    host, a, b = two_reads()
    result = host.use("extract", {"ids": [a, b], "distillation": distillation})
    assert result.error and message in result.output


def test_a_refused_call_prunes_none_of_its_ids() -> None:
    host, a, _ = two_reads()
    host.add(call("task", {"prompt": "p"}, output=BIG))
    result = host.use("discard", {"ids": [a, ident(host.messages[-1])], "reason": "noise"})
    assert result.error and result.output.startswith("Refused: nothing was discarded:")
    assert host.outputs(host.request())[0] == BIG + "a"


def test_a_tool_turned_off_is_refused_and_its_stored_calls_prune_nothing() -> None:
    host = ToolHost.start(tools={"discard": {"enabled": False}}).add(user())
    a = host.read("a.py")
    result = host.use("discard", {"ids": [a], "reason": "done"})
    assert result.error and "discard is turned off" in result.output
    assert host.outputs(host.request())[0] == BIG


def test_a_stored_call_that_was_refused_never_prunes() -> None:
    host, a, _ = two_reads()
    host.add(call("discard", {"ids": [a], "reason": "done"}, output="Refused: nothing was discarded: the user said no"))
    assert host.outputs(host.request())[0] == BIG + "a"


def test_a_stored_call_that_failed_never_prunes() -> None:
    host, a, _ = two_reads()
    host.add(call("discard", {"ids": [a], "reason": "done"}, status="error", error="Tool execution aborted"))
    assert host.outputs(host.request())[0] == BIG + "a"


def test_a_tool_that_is_not_the_plugins_is_not_answered() -> None:
    host, _, _ = two_reads()
    assert host.runtime.execute_tool("ses_test", "read", {}, host.messages) is None


def test_calls_of_the_tools_prune_nothing_when_the_host_never_offered_them() -> None:
    host = ToolHost.start(offered=False).add(user())
    a = host.read("a.py")
    host.add(call("discard", {"ids": [a], "reason": "done"}, output="Discarded 1 output"))
    assert host.outputs(host.request())[0] == BIG
