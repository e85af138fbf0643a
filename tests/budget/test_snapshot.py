"""BudgetTracker: an incremental, never-raising snapshot of how full the context is."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.budget import BudgetTracker, ContextSnapshot, build_snapshot, compute_thresholds
from dcp_plugin.budget.calibration import ReadMessage
from dcp_plugin.budget.context_now import nothing_pruned
from dcp_plugin.model.messages import info_of
from dcp_plugin.model.refs import model_ref
from dcp_plugin.model.tokens import DEFAULT_IMAGE_TOKENS, ZERO, ContentEstimate, estimate_message_split, reported_usage


def user(i: int, chars: int) -> dict[str, Any]:
    return {"info": {"id": f"u{i}", "role": "user"}, "parts": [{"type": "text", "text": "u" * chars}]}


def step(i: int, prompt: int | None, text: int = 400, output: int = 2_000, out_tokens: int = 100) -> dict[str, Any]:
    info: dict[str, Any] = {"id": f"a{i}", "role": "assistant", "modelID": "claude-sonnet-4"}
    if prompt is not None:
        info["tokens"] = {"input": prompt, "output": out_tokens, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    return {
        "info": info,
        "parts": [
            {"type": "text", "text": "t" * text},
            {"type": "tool", "tool": "read", "callID": f"c{i}",
             "state": {"status": "completed", "input": {}, "output": "o" * output}},
        ],
    }


def session(steps: int) -> list[dict[str, Any]]:
    msgs = [user(0, 4_000)]
    prompt = 20_000
    for i in range(steps):
        msgs.append(step(i, prompt))
        prompt += 100 + 800  # its output + its tool result at 2.5 chars/token
        if i % 4 == 3:
            msgs.append(user(i + 1, 1_200))
            prompt += 400
    return msgs


def test_main_path_is_last_report_plus_its_output_plus_new_content() -> None:
    msgs = [user(0, 400), step(0, 50_000, output=2_000), user(1, 400)]
    snap = BudgetTracker().observe(msgs, None, "claude-sonnet-4")
    # 50,000 reported + 100 output + 667 tool output (2,000 chars / 3) + 100 new user text (chars/4)
    assert snap.estimated_input_tokens == 50_867
    assert snap.provider_reported_tokens == 50_000
    assert snap.estimate_path == "reported"


def test_ratio_severity_tier_and_thresholds_follow_the_estimate() -> None:
    msgs = [user(0, 400), step(0, 170_000, output=0, out_tokens=0)]
    snap = BudgetTracker().observe(msgs, None, "claude-sonnet-4")
    assert snap.context_limit == 200_000
    assert snap.thresholds == compute_thresholds(200_000)
    assert snap.estimated_input_tokens == 170_000
    assert snap.ratio == 0.85
    assert (snap.severity, snap.tier, snap.tip) == ("warning", "auto", "context-high")


def test_sub_agent_inheriting_a_large_history_crosses_auto_on_its_first_request() -> None:
    msgs = [user(i, 200_000) for i in range(4)]  # 200,000 estimated tokens, nothing reported
    snap = BudgetTracker().observe(msgs, 200_000, "claude-sonnet-4")
    assert snap.provider_reported_tokens is None
    assert snap.estimate_path == "history"
    assert snap.estimated_input_tokens >= snap.thresholds.auto  # type: ignore[union-attr]
    assert snap.tier == "hard" and snap.tip == "context-critical"


def test_host_limit_wins_over_the_table() -> None:
    snap = BudgetTracker().observe([user(0, 40)], 64_000, "claude-sonnet-4")
    assert (snap.context_limit, snap.limit_source) == (64_000, "host")


def test_model_is_taken_from_the_last_report_when_the_host_gives_none() -> None:
    snap = BudgetTracker().observe([user(0, 40), step(0, 1_000)], None, None)
    assert (snap.model_id, snap.context_limit, snap.limit_source) == ("claude-sonnet-4", 200_000, "exact")


def test_incremental_observation_reads_only_new_messages() -> None:
    tracker = BudgetTracker()
    msgs = session(12)
    tracker.observe(msgs[:5])
    assert tracker.seen == 5
    tracker.observe(msgs)
    assert tracker.seen == len(msgs)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=12))
def test_incremental_snapshots_equal_a_from_scratch_read(growth: list[int]) -> None:
    msgs = session(20)
    tracker = BudgetTracker()
    end = 0
    for g in growth:
        end = min(len(msgs), end + g)
        tracker.observe(copy.deepcopy(msgs[:end]), None, "claude-sonnet-4")
    assert tracker.observe(msgs[:end], None, "claude-sonnet-4") == BudgetTracker().observe(msgs[:end], None, "claude-sonnet-4")


def test_a_newest_message_that_gained_its_usage_is_read_again() -> None:
    tracker = BudgetTracker()
    pending = step(0, None)
    tracker.observe([user(0, 400), pending])
    snap = tracker.observe([user(0, 400), step(0, 30_000)])
    assert snap.provider_reported_tokens == 30_000


def test_a_shorter_history_is_detected_as_a_rewrite() -> None:
    tracker = BudgetTracker()
    msgs = session(12)
    tracker.observe(msgs)
    snap = tracker.observe(msgs[:3])
    assert tracker.seen == 3
    assert snap.provider_reported_tokens == msgs[2]["info"]["tokens"]["input"]


def test_a_changed_history_of_the_same_length_is_detected_as_a_rewrite() -> None:
    tracker = BudgetTracker()
    tracker.observe([user(0, 40), step(0, 9_000)])
    replaced = [user(7, 40), step(8, 5_000, output=0)]
    assert tracker.observe(replaced).provider_reported_tokens == 5_000


def test_reset_forgets_the_history_but_keeps_calibration() -> None:
    tracker = BudgetTracker()
    tracker.observe(session(12))
    learned = tracker.calibrator.by_model["claude-sonnet-4"].observations
    tracker.reset()
    assert tracker.seen == 0
    assert tracker.calibrator.by_model["claude-sonnet-4"].observations == learned


def test_a_different_image_estimate_recounts_the_history() -> None:
    image = {"info": {"id": "u0", "role": "user"}, "parts": [{"type": "file", "mime": "image/png", "url": "x"}]}
    tracker = BudgetTracker()
    assert tracker.observe([image], image_tokens=1_600).estimated_input_tokens == 1_600
    assert tracker.observe([image], image_tokens=500).estimated_input_tokens == 500


def test_malformed_messages_are_skipped_without_raising() -> None:
    junk: list[Any] = [None, 5, {"parts": "nope"}, {"info": None}]
    snap = BudgetTracker().observe([*junk, user(9, 400)], None, None)
    assert snap.estimated_input_tokens == 100


def test_tracker_keeps_the_last_snapshot() -> None:
    tracker = BudgetTracker()
    snap = tracker.observe([user(0, 40)])
    assert tracker.last is snap


def test_snapshot_round_trips_through_a_dict() -> None:
    snap = BudgetTracker().observe(session(6), None, "claude-sonnet-4")
    assert ContextSnapshot.from_dict(snap.to_dict()) == snap


def test_snapshot_without_thresholds_round_trips() -> None:
    snap = build_snapshot(10, None, 0)
    assert snap.thresholds is None and snap.tier is None
    assert ContextSnapshot.from_dict(snap.to_dict()) == snap


def test_a_saved_snapshot_missing_a_key_is_a_clear_error() -> None:
    data = build_snapshot(10, None, 1_000).to_dict()
    del data["context_limit"]
    with pytest.raises(ValueError, match="missing key 'context_limit'"):
        ContextSnapshot.from_dict(data)


def test_an_earlier_point_than_the_one_read_counts_only_the_messages_before_it() -> None:
    msgs = session(6)
    tracker = BudgetTracker()
    tracker.observe(msgs, None, "claude-sonnet-4")
    end = len(msgs) - 3
    # What calibration learned from the later steps stays: compare with a tracker that knows it too.
    same_fit = BudgetTracker(copy.deepcopy(tracker.calibrator))
    assert tracker.observe(msgs, None, "claude-sonnet-4", end=end) == same_fit.observe(msgs[:end], None, "claude-sonnet-4")


def walked(message: dict[str, Any], with_usage: bool) -> ReadMessage:
    """The message as a walk reads it; without its usage when ``with_usage`` is False (not known)."""
    ref = model_ref(info_of(message))
    usage = reported_usage(message) if with_usage else None
    return estimate_message_split(message), ref.model_id if ref is not None else None, usage


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=12),
    st.integers(min_value=0, max_value=8),
    st.booleans(),
)
def test_estimates_the_caller_already_has_give_the_figure_of_a_fresh_read(
    growth: list[int], known_from: int, with_usage: bool
) -> None:
    msgs = session(20)
    known = [walked(m, with_usage) for m in msgs[known_from:]]
    fresh, given_known = BudgetTracker(), BudgetTracker()
    end = 0
    for g in growth:
        end = min(len(msgs), end + g)
        expected = fresh.tokens(msgs, DEFAULT_IMAGE_TOKENS, nothing_pruned, end)
        assert given_known.tokens(msgs, DEFAULT_IMAGE_TOKENS, nothing_pruned, end, True, known, known_from) == expected


def test_estimates_the_caller_hands_in_are_not_made_again() -> None:
    msgs = [user(0, 400), user(1, 400)]
    doubled = [((ZERO, ContentEstimate(text=200)), None, None), ((ZERO, ContentEstimate(text=200)), None, None)]
    tracker = BudgetTracker()
    assert tracker.tokens(msgs, DEFAULT_IMAGE_TOKENS, nothing_pruned, 2) == 200
    assert BudgetTracker().tokens(msgs, DEFAULT_IMAGE_TOKENS, nothing_pruned, 2, True, doubled) == 400


def test_the_model_id_the_caller_hands_in_is_the_one_calibrated() -> None:
    msgs = session(3)
    known = [(estimate_message_split(m), "named-by-the-caller", None) for m in msgs]
    tracker = BudgetTracker()
    tracker.tokens(msgs, DEFAULT_IMAGE_TOKENS, nothing_pruned, len(msgs), True, known)
    assert set(tracker.calibrator.by_model) == {"named-by-the-caller"}
