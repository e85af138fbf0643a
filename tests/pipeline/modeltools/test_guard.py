"""The loop guard: a cooldown after each prune, and a pause after refusals in a row until the user's next message."""

from __future__ import annotations

from tests.support.helpers import user
from tests.support.tools_helpers import BIG, ToolHost, written


def host_with_reads(count: int = 6, **config: object) -> tuple[ToolHost, list[str]]:
    host = ToolHost.start(**config).add(user())
    return host, [host.read(f"f{n}.py", BIG + str(n)) for n in range(count)]


def test_after_a_prune_discard_and_extract_wait_cooldown_steps() -> None:
    host, ids = host_with_reads(tools={"cooldownSteps": 2})
    assert not host.use("discard", {"ids": [ids[0]], "reason": "done"}).error
    first = host.use("discard", {"ids": [ids[1]], "reason": "done"})
    second = host.use("extract", {"ids": [ids[1]], "distillation": ["x"]})
    third = host.use("discard", {"ids": [ids[1]], "reason": "done"})
    assert [first.error, second.error, third.error] == [True, True, False]
    assert "go on with the task for 2 more steps" in first.output and "for 1 more step" in second.output


def test_steps_of_other_tools_count_toward_the_cooldown() -> None:
    host, ids = host_with_reads(tools={"cooldownSteps": 2})
    host.use("discard", {"ids": [ids[0]], "reason": "done"})
    host.read("g.py")
    host.read("h.py")
    assert not host.use("discard", {"ids": [ids[1]], "reason": "done"}).error


def test_calls_in_the_same_step_as_the_prune_are_judged_alike() -> None:
    host, ids = host_with_reads()
    host.request()
    from tests.support.helpers import assistant, tool_part  # noqa: PLC0415 - one step with two calls

    results = [
        host.runtime.execute_tool("ses_test", "discard", {"ids": [i], "reason": "done"}, host.messages, call_id=f"same_{n}")
        for n, i in enumerate(ids[:2])
    ]
    assert [r.error for r in results if r is not None] == [False, False]
    host.add(assistant(*(tool_part("discard", {"ids": [i], "reason": "done"}, output=r.output, call_id=f"same_{n}")
                         for n, (i, r) in enumerate(zip(ids[:2], results, strict=False)) if r is not None)))
    assert host.outputs(host.request())[:2] != [BIG + "0", BIG + "1"]


def test_no_cooldown_when_it_is_zero() -> None:
    host, ids = host_with_reads(tools={"cooldownSteps": 0})
    host.use("discard", {"ids": [ids[0]], "reason": "done"})
    assert not host.use("discard", {"ids": [ids[1]], "reason": "done"}).error


def test_no_list_is_written_during_the_cooldown() -> None:
    host, ids = host_with_reads(8, tools={"cooldownSteps": 3, "nudgeFrequency": 1})
    host.request()
    before = written(host)[-1]
    host.use("discard", {"ids": [ids[0]], "reason": "done"})
    for n in range(2):
        # Each read is a step whose request came before it: the requests for the 3 steps after the
        # discard's get no list, the request after them does.
        host.read(f"late{n}.py", BIG)
        host.request()
    assert written(host)[-1] == before
    host.read("after.py", BIG)
    host.request()
    assert written(host)[-1] == before + 1


def test_max_failures_refusals_in_a_row_pause_the_tools_until_the_next_user_message() -> None:
    host, ids = host_with_reads(tools={"maxFailures": 2})
    for _ in range(2):
        assert host.use("discard", {"ids": ["zzzz"], "reason": "done"}).error
    paused = host.use("discard", {"ids": [ids[0]], "reason": "done"})
    assert paused.error and "paused after 2 refused calls in a row, until the user's next message" in paused.output
    host.add(user("carry on"))
    assert not host.use("discard", {"ids": [ids[0]], "reason": "done"}).error


def test_restore_still_works_while_the_tools_are_paused() -> None:
    host, ids = host_with_reads(tools={"maxFailures": 2})
    host.use("discard", {"ids": [ids[0]], "reason": "done"})
    host.add(user())
    for _ in range(2):
        host.use("discard", {"ids": ["zzzz"], "reason": "done"})
    assert not host.use("restore", {"ids": [ids[0]]}).error


def test_no_list_is_written_while_the_tools_are_paused() -> None:
    host, ids = host_with_reads(tools={"maxFailures": 1, "nudgeFrequency": 1})
    host.request()
    before = written(host)[-1]
    host.use("discard", {"ids": ["zzzz"], "reason": "done"})
    for n in range(3):
        host.read(f"late{n}.py", BIG)
        host.request()
        assert written(host)[-1] == before


def test_an_accepted_call_starts_the_count_of_refusals_over() -> None:
    host, ids = host_with_reads(tools={"maxFailures": 2, "cooldownSteps": 0})
    host.use("discard", {"ids": ["zzzz"], "reason": "done"})
    host.use("discard", {"ids": [ids[0]], "reason": "done"})
    host.use("discard", {"ids": ["zzzz"], "reason": "done"})
    assert not host.use("discard", {"ids": [ids[1]], "reason": "done"}).error
