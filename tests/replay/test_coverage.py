"""What each provider report counts: its own request, or (cache writes lost) the prefix it read; each history's overhead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.cli.main import main
from dcp_plugin.cost.prices import DEFAULTS
from dcp_plugin.model.tokens import message_prompt_tokens
from dcp_plugin.replay.coverage import MIN_JUDGED_TOKENS, lacks_cache_writes, measured_reports, session_reports
from dcp_plugin.replay.engine import replay, session_estimate_error
from dcp_plugin.replay.overheads import HistoryOverheads
from dcp_plugin.replay.pricing import CONTINUATION_OPENING, CacheAccountant, SentRequest
from dcp_plugin.replay.requests import implied_requests

OVERHEAD = 2_000  # the system prompt and tool definitions of the generated sessions


def user(n: int, tokens: int, text: str = "") -> dict[str, Any]:
    """A user message of ``tokens`` estimated tokens (text chars/4), opening with ``text``."""
    body = (text + "u" * (4 * tokens))[: 4 * tokens]
    return {
        "info": {"id": f"msg_{n:03d}", "sessionID": "ses_c", "role": "user", "time": {"created": n * 1000}},
        "parts": [{"id": f"prt_{n:03d}", "type": "text", "text": body}],
    }


def step(n: int, tokens: int, usage: dict[str, Any] | None) -> dict[str, Any]:
    """An assistant step of ``tokens`` estimated tokens that reported ``usage`` (output 1)."""
    info: dict[str, Any] = {"id": f"msg_{n:03d}", "sessionID": "ses_c", "role": "assistant",
                            "time": {"created": n * 1000}, "modelID": "m", "providerID": "p"}
    if usage is not None:
        info["tokens"] = {"output": 1, "reasoning": 0, **usage}
    return {"info": info, "parts": [{"id": f"prt_{n:03d}", "type": "text", "text": "a" * (4 * tokens)}]}


def complete(prompt: int, previous: int) -> dict[str, Any]:
    """Usage of a request whose prompt is ``prompt``, the first ``previous`` tokens read from the cache."""
    return {"input": 2, "cache": {"read": previous, "write": prompt - previous - 2}}


def writes_lost(prompt: int, previous: int) -> dict[str, Any]:
    """The same usage as recorded by an export that dropped the cache writes."""
    return {"input": 2, "cache": {"read": previous, "write": 0}}


def session(sizes: list[int], usage: Any = complete, user_tokens: int = 300) -> list[dict[str, Any]]:
    """A user message, then one step per size; each step's usage describes the request it answers."""
    messages = [user(0, user_tokens)]
    previous = OVERHEAD  # the cache held the system prompt already (another session wrote it)
    for n, size in enumerate(sizes, 1):
        prompt = OVERHEAD + sum(message_prompt_tokens(m) for m in messages)
        messages.append(step(n, size, usage(prompt, previous)))
        previous = prompt
    return messages


def measured(messages: list[dict[str, Any]]) -> list[Any]:
    return measured_reports(messages, list(implied_requests(messages)), [message_prompt_tokens(m) for m in messages])


def test_a_complete_report_counts_its_own_request() -> None:
    first = measured(session([500, 500]))[1]
    assert (first.begin, first.end, first.partial) == (0, 2, False)


def test_a_report_that_lost_its_cache_writes_counts_the_previous_requests_messages() -> None:
    second = measured(session([500, 500], writes_lost))[1]
    assert (second.begin, second.end, second.partial) == (0, 1, True)


def test_a_report_without_cache_writes_that_counts_the_new_part_as_input_is_complete() -> None:
    # OpenAI's kind: no cache write at all, what the cache did not hold is input.
    def uncached_input(prompt: int, previous: int) -> dict[str, Any]:
        return {"input": prompt - previous, "cache": {"read": previous, "write": 0}}

    assert not measured(session([500, 500], uncached_input))[1].partial


def test_too_little_added_to_tell_is_read_as_a_complete_report() -> None:
    answer = step(1, 10, writes_lost(0, 5_000))
    assert not lacks_cache_writes(answer, MIN_JUDGED_TOKENS - 1)
    assert lacks_cache_writes(answer, MIN_JUDGED_TOKENS)


def test_a_report_that_counts_no_message_is_not_measured() -> None:
    # The first request's cache held only the system prompt: its report says nothing of the messages.
    assert measured(session([500, 500], writes_lost))[0] is None


def test_a_cache_miss_without_cache_writes_is_not_measured_and_the_next_report_is() -> None:
    messages = session([500, 500, 500, 500], writes_lost)
    messages[3]["info"]["tokens"]["cache"]["read"] = OVERHEAD  # the cache had lost everything but the system prompt
    result = measured(messages)
    assert result[2] is None
    assert result[3] is not None and result[3].end == 3


def test_the_overhead_comes_from_the_first_report_that_counts_a_message_and_scores_nothing() -> None:
    reports = session_reports(*_inputs(session([500, 500, 500], writes_lost)))
    assert reports.overheads.first == OVERHEAD + 2  # with the 2 uncached tokens it recorded
    assert [s is not None for s in reports.scored] == [False, False, True]
    assert reports.unscored == 2


def test_reports_that_lost_their_cache_writes_score_the_estimate_of_the_prefix_they_read() -> None:
    error = session_estimate_error(session([500, 800, 300, 1_200], writes_lost))
    assert error.requests == 2 and error.partial == 2
    assert max(error.errors) < 0.001  # only the 2 uncached tokens differ


def test_a_compacted_history_learns_its_own_overhead() -> None:
    # Claude Code sends more beside the summary than at the start (files it read again, the plan).
    messages = session([500, 500, 500])
    extra = 3_000
    summary = user(4, 400, CONTINUATION_OPENING)
    after = OVERHEAD + extra + message_prompt_tokens(summary)
    messages += [summary, step(5, 500, complete(after, OVERHEAD)),
                 step(6, 500, complete(after + 500 + 1, after))]
    reports = session_reports(*_inputs(messages))
    assert reports.overheads.to_dict() == {0: OVERHEAD, 4: OVERHEAD + extra}
    assert reports.scored[-1] is not None and reports.scored[-1].estimate == reports.scored[-1].reported - 1


def test_a_history_that_taught_nothing_takes_the_nearest_earlier_overhead() -> None:
    overheads = HistoryOverheads({0: 100, 10: 300})
    assert [overheads.at(0), overheads.at(7), overheads.at(10), overheads.at(40)] == [100, 100, 300, 300]
    assert HistoryOverheads({10: 300}).at(0) == 300
    assert HistoryOverheads().at(5) == 0


def test_an_inserted_message_moves_the_later_histories_start() -> None:
    overheads = HistoryOverheads({0: 100, 10: 300})
    overheads.insert(6)
    assert overheads.to_dict() == {0: 100, 11: 300}


def test_each_accountant_shifts_its_own_copy_of_the_overheads() -> None:
    shared = HistoryOverheads({0: 100, 10: 300})
    first, second = CacheAccountant([1] * 20, shared), CacheAccountant([1] * 20, shared)
    first.insert(5, 1)
    second.insert(5, 1)
    assert first.overheads.to_dict() == second.overheads.to_dict() == {0: 100, 11: 300}
    assert shared.to_dict() == {0: 100, 10: 300}


def test_a_request_after_a_compaction_is_priced_with_its_historys_overhead() -> None:
    accountant = CacheAccountant([10] * 20, HistoryOverheads({0: 100, 10: 300}))
    pricing = DEFAULTS["anthropic"]
    cost = accountant.add(SentRequest(10, 14, 0, ("p", "m"), pricing, 40, 0, {}))
    assert cost.prompt_without == 340


def test_the_replay_scores_the_same_reports_as_the_definition(tmp_path: Path) -> None:
    messages = session([500, 800, 300, 1_200], writes_lost)
    report = replay(messages, str(tmp_path))
    assert report.estimate_error.errors == session_estimate_error(messages).errors
    assert report.overhead == OVERHEAD + 2
    assert [r.reported_partial for r in report.requests] == [False, False, True, True]


@given(
    st.lists(st.integers(min_value=MIN_JUDGED_TOKENS, max_value=5_000), min_size=2, max_size=25),
    st.booleans(),
)
def test_true_prompts_score_no_error_whether_or_not_the_export_kept_the_cache_writes(
    sizes: list[int], lost: bool
) -> None:
    error = session_estimate_error(session(sizes, writes_lost if lost else complete))
    assert error.requests == len(sizes) - 1 - lost
    assert error.partial == (error.requests if lost else 0)
    assert all(e < 0.001 for e in error.errors)


def _inputs(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Any], list[int]]:
    return messages, list(implied_requests(messages)), [message_prompt_tokens(m) for m in messages]


@pytest.mark.parametrize("usage", [complete, writes_lost])
def test_the_first_request_after_a_compaction_without_cache_writes_is_left_out(usage: Any) -> None:
    messages = session([500, 500, 500], usage)
    summary = user(4, 400, CONTINUATION_OPENING)
    messages += [summary, step(5, 500, writes_lost(0, OVERHEAD))]
    assert measured(messages)[-1] is None


def compacted_session() -> list[dict[str, Any]]:
    """Three steps, a Claude Code summary, and two more steps whose history carries 3,000 tokens more."""
    messages = session([500, 500, 500])
    summary = user(4, 400, CONTINUATION_OPENING)
    after = OVERHEAD + 3_000 + message_prompt_tokens(summary)
    return [*messages, summary, step(5, 500, complete(after, OVERHEAD)), step(6, 500, complete(after + 501, after))]


def test_the_replay_report_names_the_overhead_after_a_compaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(compacted_session()))
    assert main(["replay", str(path), "--directory", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Prompt overhead outside the messages: {OVERHEAD:,} tokens" in out
    assert f"after 1 compaction: {OVERHEAD + 3_000:,}" in out


def test_the_replay_json_lists_the_overheads_after_compactions(tmp_path: Path) -> None:
    report = replay(compacted_session(), str(tmp_path))
    assert report.cost_dict()["prompt_overhead_tokens_after_compactions"] == [OVERHEAD + 3_000]
