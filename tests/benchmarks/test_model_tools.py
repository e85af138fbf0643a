"""benchmarks/model_tools.py runs end to end and reports what the tools settings rest on (not how fast)."""

from __future__ import annotations

import json

import pytest

from benchmarks.model_tools import FREQUENCIES, GUARDS, LOOP_STEPS, main

pytestmark = pytest.mark.slow  # a benchmark


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--json", "--messages", "80", "--seeds", "1", "--sizes", "80"]) == 0
    return json.loads(out.getvalue())


def test_a_prune_leaves_its_call_and_its_placeholder_in_every_later_request(result: dict) -> None:
    prune = result["prune"]
    assert prune["added_per_request"] == prune["call_and_result"] + prune["placeholder"] > 0


def test_lists_are_measured_for_every_frequency(result: dict) -> None:
    assert [row["nudge_frequency"] for row in result["lists"]] == list(FREQUENCIES)
    assert all(row["share_of_prompt_tokens_percent"] >= 0 for row in result["lists"])


def test_without_a_guard_a_looping_model_prunes_on_every_step_and_the_defaults_stop_it(result: dict) -> None:
    rows = {(r["cooldown_steps"], r["max_failures"]): r for r in result["loop"]}
    assert set(rows) == set(GUARDS)
    assert rows[(0, 1000)]["accepted"] == LOOP_STEPS
    assert (rows[(3, 3)]["accepted"], rows[(3, 3)]["refused"]) == (1, LOOP_STEPS - 1)


def test_the_hot_path_is_timed_with_and_without_the_tools(result: dict) -> None:
    [row] = result["hot_path"]
    assert row["messages"] == 80 and all(v > 0 for v in row["cold_ms"] + row["warm_ms"])
