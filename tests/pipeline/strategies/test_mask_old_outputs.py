"""maskOldOutputs: under context pressure, outputs older than the newest ones become one line naming the call."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.pipeline.strategies.mask_old_outputs import placeholder
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    call,
    hook_transform,
    make_config,
    named,
    tool_part,
    tool_parts,
    user,
)

KB = "x" * 3000  # 1,000 tokens as a tool output (chars / 3)


def read(name: str, output: str = KB, **kw: Any) -> dict[str, Any]:
    return call("read", {"filePath": f"{PROJECT}/src/{name}"}, output=output, **kw)


def answer() -> dict[str, Any]:
    return assistant({"type": "text", "text": "done"})


def mask(trigger: Any = 1000, keep_tokens: int = 0, keep_turns: int = 0, **more: Any) -> dict[str, Any]:
    settings = {"trigger": trigger, "keepTokens": keep_tokens, "keepTurns": keep_turns, "keepCalls": 0, **more}
    return {"maskOldOutputs": settings}


def outputs(messages: list[dict[str, Any]], strategies: dict[str, Any], model: Any = None, **config: Any) -> list[Any]:
    runtime = Runtime(PROJECT, StaticConfig(make_config(strategies=strategies, **config)))
    out = copy.deepcopy(messages)
    hook_transform(runtime, {"model": model} if model else {}, {"messages": out})
    return [p["state"].get("output") for p in tool_parts(out)]


def masked(message: dict[str, Any], name: str, tokens: int = 1000) -> str:
    """The placeholder of the read of ``name`` in ``message``, naming that call."""
    return named(placeholder(f"read src/{name}", tokens), message)


def six_reads() -> list[dict[str, Any]]:
    return [user(), *(read(f"f{i}.py") for i in range(1, 7)), answer()]


def test_below_the_trigger_nothing_is_masked():
    assert outputs(six_reads(), mask(trigger=100_000)) == [KB] * 6


def test_above_the_trigger_outputs_older_than_the_newest_kept_tokens_are_masked():
    # 6,000 tokens of outputs, 2,500 kept: the newest two fit, the third crosses the limit and stays too.
    messages = six_reads()
    assert outputs(messages, mask(keep_tokens=2500)) == [
        masked(messages[1], "f1.py"),
        masked(messages[2], "f2.py"),
        masked(messages[3], "f3.py"),
        KB,
        KB,
        KB,
    ]


def test_the_placeholder_names_the_tool_its_argument_and_the_size_removed():
    messages = [user(), read("app.py", "y" * 5520), read("b.py"), answer()]
    assert outputs(messages, mask(keep_tokens=1))[0] == named(
        "[dcp: old output of read src/app.py cleared (1,840 tokens) - repeat the call if you need it]", messages[1]
    )


def test_outputs_of_the_last_keep_turns_stay():
    messages = [user(), read("old.py"), user(), read("a.py"), read("b.py"), answer()]
    assert outputs(messages, mask(keep_turns=1)) == [masked(messages[1], "old.py"), KB, KB]


def test_errors_task_results_protected_tools_and_protected_paths_are_never_masked():
    failed = call("read", {"filePath": f"{PROJECT}/src/gone.py"}, status="error", error="E" * 2000)
    task = call("task", {"description": "look", "prompt": "look around", "subagent_type": "general"}, output=KB)
    grep = call("grep", {"pattern": "TODO"}, output=KB)
    secret = read("secret.py")
    messages = [user(), failed, task, grep, secret, read("a.py"), answer()]
    config = mask(protectedTools=["grep"])
    states = [p["state"] for p in tool_parts(copy.deepcopy(messages))]
    out = outputs(messages, config, protectedFilePatterns=["src/secret.py"])
    assert out == [s.get("output") for s in states[:4]] + [masked(messages[5], "a.py")]


def test_the_trigger_can_be_a_tier_of_the_budget_ladder():
    # A 10,000-token window: warn at 6,000 tokens.
    model = {"id": "small-model", "providerID": "local", "limit": {"context": 10_000}}
    five = [user(), *(read(f"f{i}.py") for i in range(1, 6)), answer()]
    seven = [user(), *(read(f"f{i}.py") for i in range(1, 8)), answer()]
    assert outputs(five, mask(trigger="warn"), model) == [KB] * 5
    assert outputs(seven, mask(trigger="warn"), model)[0] == masked(seven[1], "f1.py")


def test_a_token_trigger_past_a_small_windows_hard_tier_starts_masking_at_the_hard_tier():
    # A 10,000-token window: hard at 8,084 tokens, far below a trigger of 100,000.
    model = {"id": "small-model", "providerID": "local", "limit": {"context": 10_000}}
    seven = [user(), *(read(f"f{i}.py") for i in range(1, 8)), answer()]
    nine = [user(), *(read(f"f{i}.py") for i in range(1, 10)), answer()]
    assert outputs(seven, mask(trigger=100_000), model) == [KB] * 7
    assert outputs(nine, mask(trigger=100_000), model)[0] == masked(nine[1], "f1.py")


def test_the_trigger_can_be_a_fraction_of_the_window():
    model = {"id": "small-model", "providerID": "local", "limit": {"context": 10_000}}
    assert outputs(six_reads(), mask(trigger=0.7), model) == [KB] * 6
    messages = six_reads()
    assert outputs(messages, mask(trigger=0.5), model)[0] == masked(messages[1], "f1.py")


def test_the_newest_request_is_measured_once_it_was_answered():
    unanswered = [user(), read("f1.py"), read("f2.py"), read("f3.py")]
    # The message holding f3 answered the request before it; the request it is part of, the one
    # being made now, has no answer yet, so its context is measured at the next request.
    f1, f2, f3 = (masked(message, f"f{i}.py") for i, message in enumerate(unanswered[1:], 1))
    assert outputs(unanswered, mask()) == [f1, f2, KB]
    assert outputs([*unanswered, answer()], mask()) == [f1, f2, f3]


def test_the_context_counts_what_other_strategies_already_removed():
    # Without pruning the last request holds 2,000 tokens of outputs; deduplication leaves 1,000.
    same = [user(), read("a.py"), read("a.py"), answer()]
    assert outputs(same, mask(trigger=1500)) == [named(DUPLICATE_PLACEHOLDER, same[1]), KB]


def test_once_the_context_reached_the_trigger_masking_is_a_window_for_good():
    first = [user(), read("f1.py", KB * 2), read("f2.py"), answer()]
    more = [user(), read("f3.py"), answer()]
    # 3,000 tokens of outputs reach the trigger: f1 goes, leaving about 1,000. With f3 the context
    # is about 2,000, under the trigger, but masking has started: f2 goes too, outside the kept 1,000.
    assert outputs(first + more, mask(trigger=2500, keep_tokens=1000, mode="window")) == [
        masked(first[1], "f1.py", 2000),
        masked(first[2], "f2.py"),
        KB,
    ]


def test_a_batch_masks_down_to_the_kept_outputs_and_waits_for_the_context_to_reach_the_trigger_again():
    first = [user(), read("f1.py", KB * 2), read("f2.py"), answer()]
    more = [user(), read("f3.py"), answer()]
    # The same history as the window's: f1 goes at the trigger, but with f3 the context is back
    # under it, so f2 stays.
    assert outputs(first + more, mask(trigger=2500, keep_tokens=1000, mode="batch")) == [
        masked(first[1], "f1.py", 2000),
        KB,
        KB,
    ]


def test_a_batch_masks_again_once_the_context_grew_back_to_the_trigger():
    first = [user(), read("f1.py", KB * 2), read("f2.py"), answer()]
    more = [user(), read("f3.py"), read("f4.py"), answer()]
    # With f3 and f4 the context is about 3,000 tokens again: f2 and f3 go, f4 is the kept 1,000.
    assert outputs(first + more, mask(trigger=2500, keep_tokens=1000, mode="batch")) == [
        masked(first[1], "f1.py", 2000),
        masked(first[2], "f2.py"),
        masked(more[1], "f3.py"),
        KB,
    ]


def test_turned_off_it_masks_nothing():
    assert outputs(six_reads(), {"maskOldOutputs": {"enabled": False, "trigger": 1000, "keepTokens": 0}}) == [KB] * 6


def test_masks_wait_for_the_scheduler_and_are_written_together():
    clock = 1_790_000_000_000
    messages = [user(), *(read(f"f{i}.py") for i in range(1, 9)), answer()]
    for i, message in enumerate(messages):
        message["info"]["time"] = {"created": clock + 1000 * i}  # one warm run of requests
    config = make_config(strategies=mask(keep_tokens=3000), cache={"scheduler": True})
    state = SessionState(SESSION, config, PROJECT)
    state.update(messages)
    # Outputs 3,000 tokens deep in a warm prefix: rewriting after each one would not pay.
    waiting = [d for d in state.waiting() if d.strategy == "maskOldOutputs"]
    assert len(waiting) >= 3
    assert [d for d in state.in_force() if d.strategy == "maskOldOutputs"] == []
    later = [user(), assistant(tool_part("bash", {"command": "ls"}, output="ok"))]
    later[0]["info"]["time"] = {"created": clock + 3_600_000}  # back after the cache expired
    later[1]["info"]["time"] = {"created": clock + 3_601_000}
    state.update(messages + later)
    assert [d for d in state.waiting() if d.strategy == "maskOldOutputs"] == []
    assert len({d.applied_at for d in waiting}) == 1  # all in the first request after the break


def test_the_outputs_of_the_newest_keep_calls_calls_stay_whatever_their_size():
    messages = [user(), read("f1.py"), read("f2.py", KB * 5), read("f3.py", KB * 5), answer()]
    assert outputs(messages, mask(keepCalls=2)) == [masked(messages[1], "f1.py"), KB * 5, KB * 5]


def test_the_newest_read_of_a_file_being_worked_on_stays_and_older_reads_of_it_go():
    messages = [user(), read("a.py"), read("b.py"), read("a.py"), answer()]
    alone = {**mask(keepFileTokens=5000), "deduplication": {"enabled": False}, "supersededReads": {"enabled": False}}
    assert outputs(messages, alone) == [masked(messages[1], "a.py"), KB, KB]


def test_files_touched_longest_ago_leave_the_working_set_first():
    both = assistant(
        tool_part("read", {"filePath": f"{PROJECT}/src/c.py"}, output=KB),
        tool_part("edit", {"filePath": f"{PROJECT}/src/a.py", "oldString": "a", "newString": "b"}, output="ok"),
    )
    messages = [user(), read("a.py"), read("b.py"), both, answer()]
    # 2,000 tokens of file reads fit: a.py (just edited) and c.py are the files touched last; b.py goes.
    assert outputs(messages, mask(keepFileTokens=2000)) == [KB, masked(messages[2], "b.py"), KB, "ok"]


def test_outputs_of_other_tools_are_not_held_by_the_working_set():
    grep = call("grep", {"pattern": "TODO", "path": f"{PROJECT}/src/a.py"}, output=KB)
    messages = [user(), read("a.py"), grep, read("b.py"), answer()]
    out = outputs(messages, mask(keepFileTokens=10_000, keep_tokens=0))
    assert out == [KB, named(placeholder("grep TODO in src/a.py", 1000), grep), KB]


# One prompt and no test run is one cycle of work, whose file views the defaults keep: these tests
# are about the scheduler, so every older output of the cycle may go (the trigger and kept tokens of
# a large window).
ONE_CYCLE = {"maskOldOutputs": {"trigger": 100_000, "keepTokens": 5_000, "keepTurns": 0}}


def autonomous_rereads(rounds: int = 5, files: int = 8, tokens: int = 3600) -> list[dict[str, Any]]:
    """One user message, then the same files read round after round, a second apart (the cache stays warm)."""
    clock = 1_790_000_000_000
    reads = [read(f"m{i}.py", "y" * int(tokens * 3)) for _ in range(rounds) for i in range(files)]
    messages = [user(), *reads, answer()]
    for i, message in enumerate(messages):
        message["info"]["time"] = {"created": clock + 1000 * i}
    return messages


def test_a_warm_autonomous_run_past_the_trigger_writes_its_batch_although_its_rereads_wait():
    # Each re-read makes the older read a duplicate, deep in the warm prefix: written alone, those
    # would never pay within the overdraft. Counted as written, they kept the context at a fifth of
    # what was sent, so masking never started and nothing was written while 144,000 tokens went out.
    messages = autonomous_rereads()
    state = SessionState(SESSION, make_config(cache={"scheduler": True}, strategies=ONE_CYCLE), PROJECT, log_costs=True)
    state.update(messages)
    costs = state.scheduler.take_costs()
    trigger = state.config.strategies.mask_old_outputs.trigger
    assert max(c.tokens_without for c in costs) > 1.3 * trigger
    assert {d.strategy for d in state.in_force()} >= {"deduplication", "maskOldOutputs"}
    assert costs[-1].tokens_with < trigger


def test_a_batch_not_written_yet_takes_in_what_grows_old_until_its_rewrite_is_affordable():
    # Forty-five different files, nothing superseded: at the trigger the batch's rewrite (the kept
    # outputs processed again) costs more than the overdraft allows. A batch that stayed as it was
    # would only get dearer with every newer output behind it; topped up instead, it gets written.
    messages = autonomous_rereads(rounds=1, files=45)
    state = SessionState(SESSION, make_config(cache={"scheduler": True}, strategies=ONE_CYCLE), PROJECT, log_costs=True)
    state.update(messages)
    costs = state.scheduler.take_costs()
    trigger = state.config.strategies.mask_old_outputs.trigger
    first = next(c for c in costs if c.tokens_without >= trigger)
    written = next(c for c in costs if c.applied)
    assert written.count > first.count and written.rule == "pays"
    assert costs[-1].tokens_with < trigger < costs[-1].tokens_without


def bash(command: str, output: str = KB) -> dict[str, Any]:
    return call("bash", {"command": command}, output=output)


def test_keep_tokens_holds_file_contents_so_older_command_output_goes_first():
    messages = [user(), read("a.py"), bash("npm test"), read("b.py"), answer()]
    # 2,000 tokens kept: the two reads are what keepTokens holds; the test run between them goes.
    assert outputs(messages, mask(keep_tokens=2000)) == [KB, named(placeholder("bash npm test", 1000), messages[2]), KB]


def test_keep_tokens_of_all_holds_the_newest_outputs_whatever_they_are():
    messages = [user(), read("a.py"), bash("npm test"), read("b.py"), answer()]
    assert outputs(messages, mask(keep_tokens=2000, keepTokensOf="all")) == [masked(messages[1], "a.py"), KB, KB]


def test_a_shell_command_that_prints_a_file_is_held_like_a_read():
    messages = [user(), bash("cat src/a.py"), bash("ls src"), answer()]
    out = outputs(messages, mask(keep_tokens=1000))
    assert out == [KB, named(placeholder("bash ls src", 1000), messages[2])]


def test_an_output_whose_masking_would_leave_less_than_keep_tokens_is_passed_over_and_newer_ones_still_go():
    messages = [user(), read("big.py", KB * 3), read("s1.py", KB[:1500]), read("s2.py", KB[:1500]), answer()]
    # 4,000 tokens, 2,500 kept: masking big.py would leave 1,000, so it stays; then each small read can
    # go with big.py's 3,000 still whole.
    assert outputs(messages, mask(keep_tokens=2500)) == [
        KB * 3,
        masked(messages[2], "s1.py", 500),
        masked(messages[3], "s2.py", 500),
    ]


KINDS = {
    "read": lambda i, text: read(f"f{i}.py", text),
    "cat": lambda i, text: bash(f"cat f{i}.py", text),
    "ls": lambda i, text: bash(f"ls d{i}", text),
    "grep": lambda i, text: call("grep", {"pattern": f"p{i}"}, output=text),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(sorted(KINDS)), st.integers(10, 60)), min_size=1, max_size=12),
    st.sampled_from([0, 500, 2000, 6000]),
    st.sampled_from(["files", "all"]),
)
def test_at_least_keep_tokens_of_what_it_holds_stay_and_none_of_them_could_go_without_leaving_less(
    calls: list[tuple[str, int]], keep: int, of: str
) -> None:
    # Window mode masks at every request once the first 3,500-token read reached the trigger.
    messages = [user(), read("first.py", KB * 3 + KB[:1500])]
    # 10 tokens a unit: every output outweighs its placeholder.
    messages += [KINDS[kind](i, "y" * (30 * size)) for i, (kind, size) in enumerate(calls)]
    messages.append(answer())
    out = outputs(messages, mask(trigger=3000, keep_tokens=keep, mode="window", keepTokensOf=of))
    held = [of == "all" or kind in ("read", "cat") for kind in ["read"] + [kind for kind, _ in calls]]
    sizes = [3500] + [10 * size for _, size in calls]
    whole = [o == p["state"]["output"] for o, p in zip(out, tool_parts(messages), strict=True)]
    assert not any(w for w, h in zip(whole, held, strict=True) if not h)  # what it does not hold goes
    kept = sum(size for size, h, w in zip(sizes, held, whole, strict=True) if h and w)
    assert kept >= min(keep, sum(size for size, h in zip(sizes, held, strict=True) if h))
    assert all(kept - size < keep for size, h, w in zip(sizes, held, whole, strict=True) if h and w)


def test_keep_turns_of_files_holds_the_turns_file_views_and_lets_their_command_output_go():
    messages = [user(), read("old.py"), user(), read("a.py"), bash("ls src"), read("b.py"), answer()]
    assert outputs(messages, mask(keep_turns=1, keepTurnsOf="files")) == [
        masked(messages[1], "old.py"),
        KB,
        named(placeholder("bash ls src", 1000), messages[4]),
        KB,
    ]


def test_keep_turns_of_all_holds_every_output_of_the_turn():
    messages = [user(), read("old.py"), user(), read("a.py"), bash("ls src"), read("b.py"), answer()]
    assert outputs(messages, mask(keep_turns=1, keepTurnsOf="all")) == [masked(messages[1], "old.py"), KB, KB, KB]


def test_a_test_run_ends_a_turn_when_turns_end_at_checks():
    messages = [user(), read("a.py"), bash("npm test"), read("b.py"), answer()]
    # One user turn, split by the test run: a.py was read in the cycle before it; the run's own output is of that cycle too.
    assert outputs(messages, mask(keep_turns=1, turnsEndAtChecks=True)) == [
        masked(messages[1], "a.py"),
        named(placeholder("bash npm test", 1000), messages[2]),
        KB,
    ]


def test_without_turns_end_at_checks_a_test_run_does_not_end_the_turn():
    messages = [user(), read("a.py"), bash("npm test"), read("b.py"), answer()]
    assert outputs(messages, mask(keep_turns=1, keepTurnsOf="all", turnsEndAtChecks=False)) == [KB, KB, KB]


def test_a_user_message_with_no_call_yet_starts_a_new_turn_for_keep_turns():
    messages = [user(), read("a.py"), read("b.py"), answer(), user(), answer()]
    assert outputs(messages, mask(keep_turns=1, turnsEndAtChecks=True)) == [
        masked(messages[1], "a.py"),
        masked(messages[2], "b.py"),
    ]
