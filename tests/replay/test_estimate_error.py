"""The estimator's error per request: its statistics, which requests it scores, and where `dcp replay` shows it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import estimate_accuracy
from dcp_plugin.cli.main import main
from dcp_plugin.replay.engine import replay, session_estimate_error
from dcp_plugin.replay.estimate_error import EstimateError
from tests.support.paths import ROOT

OVERHEAD = 1_000  # what the first report says beyond the first user message (400 chars = 100 tokens)


def user(n: int, text: str) -> dict[str, Any]:
    return {
        "info": {"id": f"msg_{n:03d}", "sessionID": "ses_e", "role": "user", "time": {"created": n * 1000}},
        "parts": [{"id": f"prt_{n:03d}", "type": "text", "text": text}],
    }


def step(n: int, text: str, prompt: int, output: int) -> dict[str, Any]:
    """An assistant step that wrote ``text`` and reported ``prompt`` (3 tokens input, the rest cache writes) and ``output``."""
    tokens = {"input": 3, "output": output, "reasoning": 0, "cache": {"read": 0, "write": prompt - 3}}
    return {
        "info": {
            "id": f"msg_{n:03d}", "sessionID": "ses_e", "role": "assistant", "time": {"created": n * 1000},
            "modelID": "m", "providerID": "p", "tokens": tokens,
        },
        "parts": [{"id": f"prt_{n:03d}", "type": "text", "text": text}],
    }


def known_session() -> list[dict[str, Any]]:
    """Four requests; the estimate of each follows from the fixed ratios by hand.

    Request 1 sends the user message (100 tokens): its answer reports 1,100, so the overhead is 1,000.
    Request 2 adds step 1 (400 chars = 100 tokens, reported output 50): estimate 1,200, reported 1,000.
    Request 3 adds step 2 (40 chars = 10 tokens, reported output 300, so 300): estimate 1,500, reported 2,000.
    Request 4 adds step 3 (8 chars = 2 tokens, reported output 2): estimate 1,502, reported 1,502.
    """
    return [
        user(0, "u" * 400),
        step(1, "a" * 400, 1_100, 50),
        step(2, "b" * 40, 1_000, 300),
        step(3, "c" * 8, 2_000, 2),
        step(4, "d" * 4, 1_502, 1),
    ]


EXPECTED = sorted([200 / 1_000, 500 / 2_000, 0.0])


def test_errors_are_relative_to_the_reported_prompt() -> None:
    assert EstimateError.of([(110, 100), (90, 100), (300, 200)]).errors == (0.1, 0.1, 0.5)


def test_requests_without_a_reported_prompt_are_not_scored() -> None:
    assert EstimateError.of([(110, None), (90, 100), (5, 0)]).requests == 1


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    error = EstimateError((0.4, 0.1, 0.2, 0.3))
    assert error.median == pytest.approx(0.25)


def test_the_p90_is_the_nearest_rank() -> None:
    error = EstimateError(tuple(i / 100 for i in range(1, 21)))  # 0.01 .. 0.20
    assert error.p90 == 0.18  # the 18th of 20: ceil(0.9 * 20)


def test_no_scored_request_has_no_median_nor_p90() -> None:
    error = EstimateError()
    assert (error.median, error.p90, error.to_dict()["median_percent"]) == (None, None, None)


@given(st.lists(st.floats(min_value=0, max_value=10, allow_nan=False), min_size=1, max_size=60))
def test_at_least_nine_in_ten_requests_are_within_the_p90(errors: list[float]) -> None:
    error = EstimateError(tuple(errors))
    assert error.p90 is not None
    within = sum(1 for e in errors if e <= error.p90)
    assert within >= math.ceil(0.9 * len(errors))
    assert min(errors) <= error.p90 <= max(errors)


def test_merging_pools_the_requests_of_both() -> None:
    merged = EstimateError((0.1, 0.3)).plus(EstimateError((0.2,)))
    assert sorted(merged.errors) == [0.1, 0.2, 0.3]
    assert merged.median == 0.2


def test_the_session_error_scores_each_request_after_the_one_the_overhead_came_from() -> None:
    error = session_estimate_error(known_session())
    assert sorted(error.errors) == pytest.approx(EXPECTED)
    assert error.median == pytest.approx(0.2)


def test_the_replay_reports_the_same_error_as_its_definition(tmp_path: Path) -> None:
    report = replay(known_session(), str(tmp_path))
    assert report.overhead == OVERHEAD
    assert sorted(report.estimate_error.errors) == pytest.approx(EXPECTED)
    assert [r.reported_prompt for r in report.requests] == [None, 1_000, 2_000, 1_502]


def test_replay_json_carries_median_and_p90(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(known_session()))
    assert main(["replay", str(path), "--json", "--directory", str(tmp_path)]) == 0
    error = json.loads(capsys.readouterr().out)["estimate_error"]
    assert error == {"requests_with_reported_usage": 3, "without_cache_writes": 0, "reports_left_out": 1,
                     "median_percent": 20.0, "p90_percent": 25.0}


def test_replay_prints_the_estimator_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(known_session()))
    assert main(["replay", str(path), "--directory", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Estimator error per request: median 20.0 %, p90 25.0 %" in out
    assert "over 3 requests with reported usage" in out


def test_replay_of_several_files_prints_the_pooled_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for name in ("a.json", "b.json"):
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(known_session()))
    assert main(["replay", *map(str, paths), "--directory", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Estimator error per request: median 20.0 %, p90 25.0 %" in out
    assert "over 6 requests with reported usage" in out


def test_the_benchmark_prints_the_replays_estimator_error_per_file_and_in_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "known.json"
    path.write_text(json.dumps(known_session()))
    assert estimate_accuracy.main([str(path)]) == 0
    rows = {" ".join(line.split()[:-3]): line.split()[-3:] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert rows["known.json"] == ["20.0", "25.0", "3"]
    assert rows["total"] == ["20.0", "25.0", "3"]


def test_requests_after_a_history_reset_are_left_out_of_the_before_reset_error() -> None:
    # Step 5 reports less than 70 % of step 4's prompt: the host replaced the history.
    session = [*known_session(), step(5, "e" * 4, 900, 1), step(6, "f" * 4, 950, 1)]
    assert len(session_estimate_error(session).errors) == 5
    assert sorted(estimate_accuracy.error_before_reset(session).errors) == pytest.approx(EXPECTED)


def test_the_first_step_of_a_turn_is_not_taken_for_a_history_reset() -> None:
    # A new turn's first step may report the cached prefix only; the history goes on after it.
    session = [*known_session(), user(5, "v" * 4), step(6, "e" * 4, 500, 1), step(7, "f" * 4, 1_510, 1)]
    assert len(estimate_accuracy.error_before_reset(session).errors) == 5


README = ROOT / "README.md"
CORPUS = sorted((ROOT.parent / "shared" / "corpus" / "dev").glob("*.json"))


@pytest.mark.skipif(not CORPUS, reason="the development corpus is not next to the project")
def test_readmes_estimator_error_is_the_one_measured_on_the_development_corpus() -> None:
    total = before = EstimateError()
    for path in CORPUS:
        messages = estimate_accuracy._load(str(path))
        total = total.plus(session_estimate_error(messages))
        before = before.plus(estimate_accuracy.error_before_reset(messages))
    text = " ".join(README.read_text().split())
    assert total.median is not None and total.p90 is not None and before.median is not None and before.p90 is not None
    assert f"sessions (all carry usage; {total.requests:,} requests): **median {100 * total.median:.1f} %, p90 " \
        f"{100 * total.p90:.1f} %**" in text
    assert f"({before.requests:,} requests: median {100 * before.median:.1f} %, p90 {100 * before.p90:.1f} %;" in text
