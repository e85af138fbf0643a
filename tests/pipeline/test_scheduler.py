"""The cache scheduler: when a decided prune is first written, and what each request costs with and without it."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from dcp_plugin.cost.prices import DEFAULTS
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.decisions import CallRecord, Decision
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from dcp_plugin.pipeline.scheduler import Point, Scheduler
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    hook_command,
    hook_transform,
    make_config,
    named,
    tool_part,
    user,
)

ANTHROPIC = DEFAULTS["anthropic"]
OPENAI = DEFAULTS["openai"]


# -- the scheduler alone: hand-computed ----------------------------------------------------------
def decision_at(message: int, tokens: int) -> Decision:
    record = CallRecord(f"c{message}", "read", message, message, 0, None, f"m{message}", 0, "completed")
    return Decision(record, "deduplication", "output", "[placeholder]", tokens)


def scheduler_with(messages: int, tokens: int = 1_000) -> Scheduler:
    scheduler = Scheduler(log_costs=True)
    for _ in range(messages):
        scheduler.add_message(tokens)
    return scheduler


def point(count: int, seconds: float, pricing: Any = ANTHROPIC, auto: bool = False) -> Point:
    return Point(count, int(seconds * 1000), ("anthropic", "claude"), pricing, lambda: auto)


def test_the_first_request_is_cold_and_written_in_full() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    [cost] = s.take_costs()
    assert (cost.cold, cost.cost_without, cost.cost_with) == (True, 12_500, 12_500)


def test_a_scheduler_not_asked_to_log_keeps_only_the_latest_request_cost_and_hands_it_once() -> None:
    logged, quiet = scheduler_with(10), Scheduler()
    for _ in range(10):
        quiet.add_message(1_000)
    for s in (logged, quiet):
        s.at(point(10, 0), 1)
        s.add_message(1_000)
        s.at(point(11, 10), 2)
    assert quiet.take_costs() == []
    assert quiet.take_latest_cost() == logged.take_costs()[-1]
    assert quiet.take_latest_cost() is None


def test_a_warm_request_reads_the_previous_request_from_the_cache() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    s.at(point(11, 10), 2)
    cost = s.take_costs()[-1]
    # 10,000 tokens read at 0.1, the 1,000 new ones written at 1.25.
    assert (cost.cold, cost.cost_without, cost.cost_with) == (False, 2_250, 2_250)


def test_a_prune_deep_in_a_warm_prefix_waits() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    waiting = decision_at(2, 800)
    s.pend(waiting)
    # Writing it would process 8,000 cached tokens again: 1.15 x 8,000 - 1.25 x 800 = 8,200 more now.
    assert s.at(point(11, 10), 2) == []
    assert waiting.applied_at is None and s.pending == 1


def test_a_gap_longer_than_the_ttl_writes_every_waiting_prune_for_free() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    waiting = decision_at(2, 800)
    s.pend(waiting)
    s.at(point(11, 10), 2)
    s.add_message(1_000)
    assert s.at(point(12, 10 + 301), 3) == [waiting]
    cost = s.take_costs()[-1]
    assert (cost.cold, cost.rule, cost.rewritten) == (True, "cold", 0)
    assert (cost.cost_without, cost.cost_with) == (1.25 * 12_000, 1.25 * 11_200)


def test_a_model_switch_makes_the_cache_cold() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    waiting = decision_at(2, 800)
    s.pend(waiting)
    switched = Point(11, 10_000, ("openai", "gpt-5"), OPENAI, lambda: False)
    assert s.at(switched, 2) == [waiting]


def test_a_part_the_previous_request_never_sent_is_pruned_at_once() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    fresh = decision_at(10, 800)
    s.pend(fresh)
    assert s.at(point(11, 10), 2) == [fresh]
    cost = s.take_costs()[-1]
    assert (cost.rule, cost.rewritten, cost.cost_with) == ("tail", 0, 0.1 * 10_000 + 1.25 * 200)


def paying() -> tuple[Scheduler, Decision]:
    """A warm session and a prune in its last message sent, which pays back at once."""
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    big = decision_at(9, 950)
    s.pend(big)
    return s, big


def test_a_batch_that_pays_back_at_once_is_written_in_a_warm_cache() -> None:
    s, big = paying()
    # S = 1,000 (the last message sent), R = 950: 1.15 x 1,000 - 1.25 x 950 < 0, cheaper even now.
    assert s.at(point(11, 10), 2) == [big]
    cost = s.take_costs()[-1]
    assert cost.rule == "pays" and cost.rewritten == 50 and cost.cost_with < cost.cost_without


def banked() -> tuple[Scheduler, Decision]:
    """A session whose cold request banked 1,000 tokens of savings, and a prune 1,000 tokens deep."""
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    s.pend(decision_at(2, 800))
    s.at(point(11, 10), 2)
    s.add_message(1_000)
    s.at(point(12, 400), 3)
    s.add_message(1_000)
    late = decision_at(11, 500)
    s.pend(late)
    return s, late


def test_the_auto_tier_spends_the_savings_on_a_prune_that_would_not_pay_back_soon() -> None:
    s, late = banked()
    assert s.bank == pytest.approx(1_000)
    assert s.at(point(13, 410, auto=True), 4) == [late]
    assert s.take_costs()[-1].rule == "auto"


def test_below_the_auto_tier_the_same_prune_waits() -> None:
    s, late = banked()
    assert s.at(point(13, 410), 4) == []


def _not_asked() -> bool:
    raise AssertionError("the auto tier was asked")


def test_a_batch_that_pays_back_is_written_without_asking_whether_the_context_reached_the_auto_tier() -> None:
    s, big = paying()
    assert s.at(Point(11, 10_000, ("anthropic", "claude"), ANTHROPIC, _not_asked), 2) == [big]


def test_whether_the_context_reached_the_auto_tier_is_asked_once_for_every_batch_that_does_not_pay_back() -> None:
    s, late = banked()
    deeper = decision_at(10, 900)  # a second batch (from message 10) that does not pay back either
    s.pend(deeper)
    asked: list[bool] = []

    def auto_tier() -> bool:
        asked.append(True)
        return True

    assert s.at(Point(13, 410_000, ("anthropic", "claude"), ANTHROPIC, auto_tier), 4) == [deeper, late]
    assert (len(asked), s.take_costs()[-1].rule) == (1, "auto")


def test_a_rewrite_is_never_bought_with_savings_the_session_has_not_made() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    s.pend(decision_at(9, 500))
    # Even at the auto tier: 1.15 x 1,000 - 1.25 x 500 = 525 more, and nothing saved yet.
    assert s.at(point(11, 10, auto=True), 2) == []


def test_the_overdraft_never_buys_a_rewrite_that_does_not_pay_back_even_at_the_auto_tier() -> None:
    s = scheduler_with(10)
    s.overdraft = 0.05  # 5 % of the 12,500 the cold request cost: 625
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    s.pend(decision_at(9, 500))
    # 525 more now, 50 saved a request after: it does not pay back within the 1 request the run has lasted.
    assert s.at(point(11, 10, auto=True), 2) == []


def test_a_sweep_is_written_at_once_and_its_rewrite_billed_to_the_next_request() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    swept = decision_at(2, 800)
    s.pend(swept)
    s.force([swept], 1)
    assert swept.applied_at == 1
    s.add_message(1_000)
    s.at(point(11, 10), 2)
    cost = s.take_costs()[-1]
    assert cost.rewritten == 7_200 and cost.cost_with > cost.cost_without


def test_with_pricing_none_every_request_is_priced_in_full_and_every_prune_applies() -> None:
    s = scheduler_with(10)
    s.at(point(10, 0, DEFAULTS["none"]), 1)
    s.add_message(1_000)
    deep = decision_at(1, 800)
    s.pend(deep)
    assert s.at(point(11, 10, DEFAULTS["none"]), 2) == [deep]


def test_with_the_scheduler_off_every_prune_is_written_at_the_next_request() -> None:
    s = scheduler_with(10)
    s.enabled = False
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    deep = decision_at(1, 800)
    s.pend(deep)
    assert s.at(point(11, 10), 2) == [deep]


# -- through the runtime ---------------------------------------------------------------------------
BIG = "line of a file that is long enough to matter\n" * 50
HUGE = "another file, much longer, read in between\n" * 400


def timed(message: dict[str, Any], seconds: float) -> dict[str, Any]:
    message["info"]["time"] = {"created": int(seconds * 1000)}
    return message


def read(path: str, output: str, seconds: float) -> dict[str, Any]:
    return timed(assistant(tool_part("read", {"filePath": path}, output=output)), seconds)


def deep_duplicate(gap: float) -> list[dict[str, Any]]:
    """A read, a much larger read, then the first read again; ``gap`` seconds before the last request."""
    return [
        timed(user(), 0),
        read("/p/a.py", BIG, 5),
        read("/p/big.py", HUGE, 10),
        read("/p/a.py", BIG, 15),
        timed(user("next"), 15 + gap),
    ]


def runtime(**config: Any) -> Runtime:
    return Runtime(PROJECT, StaticConfig(make_config(cache={"scheduler": True, **config})))


def outputs(messages: list[dict[str, Any]]) -> list[str]:
    return [p["state"]["output"] for m in messages for p in m["parts"] if p.get("type") == "tool"]


def test_a_duplicate_deep_in_a_warm_prefix_is_decided_but_not_written() -> None:
    rt = runtime()
    sent = copy.deepcopy(deep_duplicate(gap=60))
    hook_transform(rt, {}, {"messages": sent})
    assert outputs(sent)[0] == BIG
    view = rt.view(SESSION)
    assert view is not None and [d.call_id for d in view.waiting] == [sent[1]["parts"][0]["callID"]]


def test_the_same_duplicate_is_written_once_the_cache_has_expired() -> None:
    rt = runtime()
    sent = copy.deepcopy(deep_duplicate(gap=600))
    hook_transform(rt, {}, {"messages": sent})
    assert outputs(sent)[0] == named(DUPLICATE_PLACEHOLDER, sent[1])


def test_with_no_prompt_cache_the_duplicate_is_written_at_once() -> None:
    rt = runtime(pricing="none")
    sent = copy.deepcopy(deep_duplicate(gap=60))
    hook_transform(rt, {}, {"messages": sent})
    assert outputs(sent)[0] == named(DUPLICATE_PLACEHOLDER, sent[1])


def test_a_sweep_writes_a_waiting_prune_at_once() -> None:
    rt = runtime()
    messages = deep_duplicate(gap=60)
    hook_transform(rt, {}, {"messages": copy.deepcopy(messages)})
    output: dict[str, Any] = {"parts": []}
    hook_command(rt, {"command": "dcp", "arguments": "sweep", "sessionID": SESSION, "messages": messages}, output)
    sent = copy.deepcopy(messages)
    hook_transform(rt, {}, {"messages": sent})
    assert outputs(sent)[0] == named(DUPLICATE_PLACEHOLDER, sent[1])


def test_a_written_placeholder_stays_byte_identical_on_every_later_request() -> None:
    rt = runtime()
    history = deep_duplicate(gap=600)
    later = [*history, read("/p/c.py", BIG, 700), read("/p/d.py", BIG, 705)]
    seen: dict[tuple[int, int], str] = {}
    for end in range(5, len(later) + 1):
        sent = copy.deepcopy(later[:end])
        hook_transform(rt, {}, {"messages": sent})
        for mi, message in enumerate(sent):
            for pi, part in enumerate(message["parts"]):
                output = part.get("state", {}).get("output")
                if isinstance(output, str) and output.startswith("[dcp:"):
                    assert seen.setdefault((mi, pi), output) == output
        assert all(sent[mi]["parts"][pi]["state"]["output"] == text for (mi, pi), text in seen.items())
    assert seen


def warm_run(overdraft: float) -> tuple[Scheduler, Decision]:
    """A cold request of 10,000 tokens, three warm ones of 1,000 more each, nothing saved; then a prune
    of 800 tokens in the last message sent, which pays back in two requests (1.15 x 1,000 - 1.25 x 800 = 150
    more now, 80 less on every later request) but costs more than the session has saved (nothing)."""
    s = Scheduler(overdraft=overdraft)
    for _ in range(10):
        s.add_message(1_000)
    s.at(point(10, 0), 1)
    for n in range(1, 4):
        s.add_message(1_000)
        s.at(point(10 + n, 10 * n), 1 + n)
    s.add_message(1_000)
    prune = decision_at(12, 800)
    s.pend(prune)
    return s, prune


def test_without_an_overdraft_a_prune_that_pays_waits_for_savings_the_session_has_not_made() -> None:
    s, _ = warm_run(0.0)
    assert s.at(point(14, 40), 5) == []


def test_an_overdraft_lets_a_prune_that_pays_spend_ahead_of_the_savings() -> None:
    # The session has cost 19,550 without the plugin: 1 % of it covers the 150.
    s, prune = warm_run(0.01)
    assert s.totals.cost_without == pytest.approx(19_550)
    assert s.at(point(14, 40), 5) == [prune]
    assert s.bank < 0
    assert -s.bank <= 0.01 * s.totals.cost_without


def test_a_prune_costing_more_than_the_overdraft_allows_waits() -> None:
    s, _ = warm_run(0.005)  # 97.75 of overdraft, 150 needed
    assert s.at(point(14, 40), 5) == []


def test_prices_that_change_between_requests_are_read_at_the_request_they_change() -> None:
    longer = dataclasses.replace(ANTHROPIC, ttl_seconds=3600.0)
    s = scheduler_with(10)
    s.at(point(10, 0), 1)
    s.add_message(1_000)
    s.at(point(11, 400, longer), 2)  # 400 s: within the longer lifetime
    s.add_message(1_000)
    s.at(point(12, 800), 3)  # 400 s again, past the default lifetime
    assert [cost.cold for cost in s.take_costs()] == [True, False, True]
