"""Compaction controller: when it runs, what it asks the side query, and the circuit breaker."""

from __future__ import annotations

from typing import Any

import pytest

from dcp_plugin.budget import CompactionController, CompactionStatus, compute_thresholds

T = compute_thresholds(200_000)  # warn 147K, auto 167K, hard 177K
BELOW_AUTO = 150_000
AUTO = 170_000
HARD = 180_000
MESSAGES = [{"info": {"role": "user", "id": "u1"}, "parts": [{"type": "text", "text": "hi"}]}]


class SideQuery:
    """Records requests and answers from a script (dicts, or exceptions to raise)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> Any:
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else {"text": "summary", "finish_reason": "stop"}
        if isinstance(answer, BaseException):
            raise answer
        return answer


OK = {"text": "the summary", "finish_reason": "stop", "usage": {"output": 900}}
FAIL = RuntimeError("provider unavailable")


def test_below_auto_nothing_happens_and_the_side_query_is_not_called() -> None:
    query = SideQuery()
    outcome = CompactionController().before_request(BELOW_AUTO, T, query, MESSAGES)
    assert outcome.status == CompactionStatus.NONE
    assert query.requests == []


def test_without_thresholds_nothing_happens() -> None:
    assert CompactionController().before_request(10**9, None, SideQuery(), MESSAGES).status == "none"


def test_at_auto_a_summary_is_made() -> None:
    outcome = CompactionController().before_request(AUTO, T, SideQuery(OK), MESSAGES)
    assert outcome.status == CompactionStatus.COMPACTED
    assert outcome.summary == "the summary"
    assert outcome.forced is False
    assert outcome.usage == {"output": 900}


def test_exactly_at_auto_counts_as_reaching_it() -> None:
    assert CompactionController().before_request(T.auto, T, SideQuery(OK), MESSAGES).status == "compacted"


def test_side_query_gets_thinking_off_and_a_20k_output_cap() -> None:
    query = SideQuery(OK)
    CompactionController().before_request(AUTO, T, query, MESSAGES)
    (request,) = query.requests
    assert request["thinking"] is False
    assert request["max_output_tokens"] == 20_000
    assert request["messages"] == MESSAGES
    assert isinstance(request["system"], str) and request["system"]


def test_crossing_hard_forces_compaction() -> None:
    outcome = CompactionController().before_request(HARD, T, SideQuery(OK), MESSAGES)
    assert outcome.status == CompactionStatus.FORCED
    assert outcome.forced is True
    assert outcome.summary == "the summary"


@pytest.mark.parametrize("reason", ["length", "max_tokens", "MAX_TOKENS"])
def test_a_summary_cut_off_by_the_output_cap_is_discarded(reason: str) -> None:
    outcome = CompactionController().before_request(
        AUTO, T, SideQuery({"text": "half a summ", "finish_reason": reason}), MESSAGES
    )
    assert outcome.status == CompactionStatus.DISCARDED_TRUNCATED
    assert outcome.summary is None
    assert outcome.consecutive_failures == 1


def test_one_failure_does_not_block_the_next_attempt() -> None:
    controller = CompactionController()
    query = SideQuery(FAIL, OK)
    assert controller.before_request(AUTO, T, query, MESSAGES).status == CompactionStatus.FAILED
    assert controller.before_request(AUTO, T, query, MESSAGES).status == CompactionStatus.COMPACTED
    assert len(query.requests) == 2


def test_three_failures_open_the_breaker_and_automatic_attempts_become_no_ops() -> None:
    controller = CompactionController()
    query = SideQuery(FAIL, FAIL, FAIL)
    statuses = [controller.before_request(AUTO, T, query, MESSAGES).status for _ in range(3)]
    assert statuses == ["failed", "failed", "failed"]
    outcome = controller.before_request(AUTO, T, query, MESSAGES)
    assert outcome.status == CompactionStatus.SKIPPED_BREAKER_OPEN
    assert outcome.consecutive_failures == 3
    assert len(query.requests) == 3


def test_a_forced_attempt_recovers_from_an_open_breaker() -> None:
    controller = CompactionController()
    query = SideQuery(FAIL, FAIL, FAIL, OK, OK)
    for _ in range(3):
        controller.before_request(AUTO, T, query, MESSAGES)
    assert controller.breaker_open
    assert controller.before_request(HARD, T, query, MESSAGES).status == CompactionStatus.FORCED
    assert controller.consecutive_failures == 0
    assert controller.before_request(AUTO, T, query, MESSAGES).status == CompactionStatus.COMPACTED


def test_a_failed_forced_attempt_is_not_counted() -> None:
    controller = CompactionController()
    query = SideQuery(FAIL, FAIL, FAIL, FAIL)
    controller.before_request(AUTO, T, query, MESSAGES)
    controller.before_request(AUTO, T, query, MESSAGES)
    outcome = controller.before_request(HARD, T, query, MESSAGES)
    assert outcome.status == CompactionStatus.FAILED and outcome.forced
    # forcing reset the count to zero and its own failure did not add to it
    assert controller.consecutive_failures == 0


def test_success_resets_the_failure_count() -> None:
    controller = CompactionController()
    query = SideQuery(FAIL, FAIL, OK)
    for _ in range(3):
        controller.before_request(AUTO, T, query, MESSAGES)
    assert controller.consecutive_failures == 0


def test_a_side_query_answer_that_is_not_a_dict_is_a_failure_not_an_exception() -> None:
    outcome = CompactionController().before_request(AUTO, T, SideQuery("just text"), MESSAGES)
    assert outcome.status == CompactionStatus.FAILED
    assert outcome.error is not None and "expected a dict" in outcome.error


def test_an_empty_summary_is_a_failure() -> None:
    outcome = CompactionController().before_request(AUTO, T, SideQuery({"text": "  ", "finish_reason": "stop"}), MESSAGES)
    assert outcome.status == CompactionStatus.FAILED


def test_a_raising_side_query_is_reported_not_raised() -> None:
    outcome = CompactionController().before_request(AUTO, T, SideQuery(FAIL), MESSAGES)
    assert outcome.error is not None and "RuntimeError" in outcome.error


def test_without_a_side_query_the_host_is_told_it_is_unsupported() -> None:
    outcome = CompactionController().before_request(HARD, T, None, MESSAGES)
    assert outcome.status == CompactionStatus.UNSUPPORTED
    assert outcome.forced is True


def test_disabled_controller_never_calls_the_side_query() -> None:
    query = SideQuery()
    outcome = CompactionController(enabled=False).before_request(HARD, T, query, MESSAGES)
    assert outcome.status == CompactionStatus.DISABLED
    assert query.requests == []


def test_breaker_state_survives_a_round_trip() -> None:
    controller = CompactionController()
    for _ in range(3):
        controller.before_request(AUTO, T, SideQuery(FAIL), MESSAGES)
    restored = CompactionController()
    restored.load(controller.to_dict())
    assert restored.breaker_open


def test_malformed_saved_breaker_state_leaves_it_closed() -> None:
    controller = CompactionController()
    controller.load({"consecutive_failures": "many"})
    assert controller.consecutive_failures == 0
