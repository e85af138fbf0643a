"""Calibration learns a session's characters per token from reported usage and converges."""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.budget import Calibration, Calibrator, predict_prompt_tokens
from dcp_plugin.budget.calibration import (
    MAX_SCALE,
    MIN_SCALE,
    EstimatorState,
    _clamp,
    advance,
    advance_run,
    message_key,
    predict,
)
from dcp_plugin.model.tokens import ContentEstimate, estimate_message_split, reported_usage

TEXT_CPT = 3.0  # the session's real characters per token for prose
JSON_CPT = 2.5  # and for tool output
OVERHEAD = 10_000


def known_ratio_session(steps: int, seed: int = 7) -> list[dict[str, Any]]:
    """A session whose every reported prompt is exactly overhead + chars / known ratio."""
    rng = random.Random(seed)
    prompt = OVERHEAD
    first = "u" * 3_000
    messages: list[dict[str, Any]] = [{"info": {"id": "m0", "role": "user"}, "parts": [{"type": "text", "text": first}]}]
    prompt += math.ceil(len(first) / TEXT_CPT)
    for i in range(steps):
        text = "t" * rng.randint(300, 6_000)
        output = "o" * rng.randint(200, 12_000)
        out_tokens = math.ceil(len(text) / TEXT_CPT)
        messages.append({
            "info": {"id": f"a{i}", "role": "assistant", "modelID": "m",
                     "tokens": {"input": prompt, "output": out_tokens, "reasoning": 0, "cache": {"read": 0, "write": 0}}},
            "parts": [{"type": "text", "text": text},
                      {"type": "tool", "tool": "read", "callID": f"c{i}", "state": {"status": "completed", "input": {}, "output": output}}],
        })
        prompt += out_tokens + math.ceil(len(output) / JSON_CPT)
        if rng.random() < 0.3:
            note = "n" * rng.randint(100, 4_000)
            messages.append({"info": {"id": f"u{i}", "role": "user"}, "parts": [{"type": "text", "text": note}]})
            prompt += math.ceil(len(note) / TEXT_CPT)
    return messages


def test_until_there_is_data_the_fixed_ratios_apply() -> None:
    c = Calibration()
    assert c.scales() == (1.0, 1.0)
    assert c.scale(ContentEstimate(text=100, json=50, media=1600)) == 1_750
    assert c.overhead == 0


def test_calibration_converges_on_the_sessions_known_ratios() -> None:
    calibrator = Calibrator()
    predict_prompt_tokens(known_ratio_session(40), calibrator)
    c = calibrator.by_model["m"]
    assert c.text_chars_per_token == pytest.approx(TEXT_CPT, rel=0.03)
    assert c.output_chars_per_token == pytest.approx(JSON_CPT, rel=0.03)


def test_calibration_learns_the_fixed_overhead_from_the_first_report() -> None:
    calibrator = Calibrator()
    predict_prompt_tokens(known_ratio_session(40), calibrator)
    assert calibrator.by_model["m"].overhead == pytest.approx(OVERHEAD, rel=0.01)


def test_calibrated_estimate_lands_closer_to_the_next_report_than_the_fixed_ratios() -> None:
    session = known_ratio_session(60)
    calibrator = Calibrator()
    state = fixed = EstimatorState()
    cal_errors: list[float] = []
    fixed_errors: list[float] = []
    for i, message in enumerate(session):
        tokens = message["info"].get("tokens")
        if tokens and i > 30 and state.anchor is not None:
            actual = tokens["input"]
            cal_errors.append(abs(predict(state, calibrator).tokens - actual) / actual)
            fixed_errors.append(abs(predict(fixed, None).tokens - actual) / actual)
        state = advance(state, message, calibrator)
        fixed = advance(fixed, message, None)
    assert max(cal_errors) < 0.005
    assert sum(cal_errors) < sum(fixed_errors) / 3


def test_first_request_path_uses_overhead_and_learned_ratio() -> None:
    session = known_ratio_session(40)
    last = max(i for i, m in enumerate(session) if "tokens" in m["info"])
    actual = session[last]["info"]["tokens"]["input"]
    calibrator = Calibrator()
    predict_prompt_tokens(session[:last], calibrator)  # learn from the steps before it only
    # the same history without any report, as a sub-agent inheriting it would see it
    stripped = [{**m, "info": {k: v for k, v in m["info"].items() if k != "tokens"}} for m in session[:last]]
    calibrated = predict_prompt_tokens(stripped, calibrator)
    fixed = predict_prompt_tokens(stripped, Calibrator())
    assert calibrated.path == fixed.path == "history"
    calibrated_error = abs(calibrated.tokens - actual) / actual
    assert calibrated_error < 0.01
    assert calibrated_error < abs(fixed.tokens - actual) / actual / 3


def test_replaying_the_same_history_does_not_learn_twice() -> None:
    session = known_ratio_session(10)
    calibrator = Calibrator()
    predict_prompt_tokens(session, calibrator)
    before = calibrator.by_model["m"].observations
    predict_prompt_tokens(session, calibrator)
    assert calibrator.by_model["m"].observations == before


def test_a_model_switch_starts_a_fresh_fit() -> None:
    calibrator = Calibrator()
    predict_prompt_tokens(known_ratio_session(10), calibrator)
    other = calibrator.for_model("other-model")
    assert other.observations == 0 and other.scales() == (1.0, 1.0)
    assert calibrator.by_model["m"].observations > 0


def test_implausible_steps_are_ignored() -> None:
    c = Calibration()
    assert c.observe_step(-500, ContentEstimate(text=1_000)) is False  # history shrank (pruning)
    assert c.observe_step(50_000, ContentEstimate(text=1_000)) is False  # history rewritten
    assert c.observe_step(10, ContentEstimate(text=5)) is False  # too small to say anything
    assert c.observations == 0


def test_calibrator_round_trips_through_a_dict() -> None:
    calibrator = Calibrator()
    predict_prompt_tokens(known_ratio_session(10), calibrator)
    restored = Calibrator.from_dict(calibrator.to_dict())
    assert restored.by_model["m"].scales() == calibrator.by_model["m"].scales()
    assert restored.by_model["m"].overhead == calibrator.by_model["m"].overhead
    assert restored.learned == calibrator.learned


def test_malformed_saved_calibration_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="calibration: malformed"):
        Calibration.from_dict({"sums": [1, 2]})


@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 5000), st.integers(1, 20000)), max_size=8), st.integers(-10**6, 10**6))
def test_scaling_tool_content_alone_is_scaling_it_as_an_estimate(steps: list[tuple[int, int, int]], tokens: int) -> None:
    c = Calibration()
    for text, json_, reported in steps:
        c.observe_step(reported, ContentEstimate(text=text, json=json_))
    assert c.scale_json(tokens) == c.scale(ContentEstimate(json=tokens))


@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 5000), st.integers(1, 20000)), min_size=1, max_size=8))
def test_the_fit_kept_between_observations_is_the_fit_solved_afresh(steps: list[tuple[int, int, int]]) -> None:
    c = Calibration()
    for text, json_, reported in steps:
        c.observe_step(reported, ContentEstimate(text=text, json=json_))
        fresh = Calibration.from_dict(c.to_dict())
        assert c.scales() == fresh.scales()


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_scale_is_clamped_to_its_range_and_an_unusable_one_is_one(value: float) -> None:
    expected = 1.0 if not math.isfinite(value) else min(MAX_SCALE, max(MIN_SCALE, value))
    assert _clamp(value) == expected


def _naive_advance(state: EstimatorState, message: object, calibrator: Calibrator) -> EstimatorState:
    """The estimator's rule for one message, written plainly (the reference :func:`advance_run` is held to)."""
    if not isinstance(message, dict):
        return dataclasses.replace(state, count=state.count + 1)
    model, incoming = estimate_message_split(message)
    usage = reported_usage(message)
    if usage is None:
        both = model.plus(incoming)
        return dataclasses.replace(
            state, tail=state.tail.plus(both), history=state.history.plus(both), count=state.count + 1
        )
    model_id = (message.get("info") or {}).get("modelID")
    key = message_key(message, state.count)
    if key not in calibrator.learned:
        calibrator.learned.add(key)
        calibration = calibrator.for_model(model_id)
        if state.anchor is not None and state.anchor_model == model_id:
            calibration.observe_step(usage.prompt - state.anchor.prompt - state.anchor.carried, state.tail)
        if calibration.first_prompt is None:
            calibration.observe_first(usage.prompt, state.history, state.history_reported_carried)
    return EstimatorState(
        usage,
        model_id,
        state.count,
        incoming,
        state.history.plus(incoming),
        state.history_reported_model.plus(model),
        state.history_reported_carried + usage.output + usage.reasoning,
        state.count + 1,
    )


# Long enough, at times, for a step to be an observation (MIN_OBSERVATION_TOKENS); quotes and newlines escape.
_TEXTS = st.builds(lambda n, chars: chars * n, st.integers(0, 3_000), st.sampled_from(["ab", '"', "x\n"]))
_STEP = st.fixed_dictionaries(
    {
        "info": st.fixed_dictionaries(
            {
                "id": st.sampled_from(["a", "b", "c", "d"]),  # repeated ids: a step learned once
                "role": st.just("assistant"),
                "modelID": st.sampled_from(["m1", "m2"]),
                "tokens": st.fixed_dictionaries(
                    {"input": st.integers(0, 60_000), "output": st.integers(0, 900), "reasoning": st.integers(0, 90)}
                ),
            }
        ),
        "parts": st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _TEXTS}), max_size=2),
    }
)
_IMAGE = {"type": "file", "mime": "image/png", "url": "data:image/png;base64,AA"}  # counts as media
_USER = st.builds(
    lambda text, image: {"info": {"role": "user"}, "parts": [{"type": "text", "text": text}, *([_IMAGE] if image else [])]},
    _TEXTS,
    st.booleans(),
)
_OUTPUT = st.builds(
    lambda out: {"info": {"role": "assistant"}, "parts": [{"type": "tool", "tool": "read", "state": {"status": "completed", "input": {}, "output": out}}]},
    _TEXTS,
)


@given(st.lists(st.one_of(_STEP, _USER, _OUTPUT, st.none()), max_size=14), st.lists(st.integers(0, 14), max_size=4))
def test_a_run_of_messages_is_the_rule_applied_to_each_in_turn(messages: list[Any], cuts: list[int]) -> None:
    expected_calibrator = Calibrator()
    expected = [EstimatorState()]
    for message in messages:
        expected.append(_naive_advance(expected[-1], message, expected_calibrator))
    # The same messages read in runs cut anywhere: every run ends in the state the rule reaches
    # there, and starts from the state before its last message.
    calibrator = Calibrator()
    state = EstimatorState()
    for end in [*sorted(min(cut, len(messages)) for cut in cuts), len(messages)]:
        before, after = advance_run(state, messages, end, calibrator)
        assert after == expected[max(end, state.count)]
        assert before == (expected[end - 1] if end > state.count else state)
        state = after
    assert calibrator.to_dict() == expected_calibrator.to_dict()
    assert calibrator.learned == expected_calibrator.learned


@given(st.lists(st.one_of(_STEP, _USER, _OUTPUT, st.none()), max_size=14), st.integers(0, 14), st.booleans())
def test_a_run_given_the_walks_reads_is_the_run_that_reads_them_itself(
    messages: list[Any], known_from: int, with_usage: bool
) -> None:
    # A walk hands in what it read of the messages from ``known_from`` on (usage left unread, None,
    # or read already): the states and what is learned are those of reading every message here.
    reads = [
        (estimate_message_split(m), (m.get("info") or {}).get("modelID"), reported_usage(m) if with_usage else None)
        for m in messages[known_from:]
        if isinstance(m, dict)
    ]
    if len(reads) != len(messages[known_from:]):
        return  # a malformed entry among them: the walk reads nothing of it (covered above)
    by_reading, given = Calibrator(), Calibrator()
    expected = advance_run(EstimatorState(), messages, len(messages), by_reading)
    assert advance_run(EstimatorState(), messages, len(messages), given, known=reads, known_from=known_from) == expected
    assert given.to_dict() == by_reading.to_dict()
