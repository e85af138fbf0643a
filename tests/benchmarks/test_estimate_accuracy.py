"""The estimate-accuracy benchmark runs on generated and recorded sessions and reports errors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # a benchmark

BENCHMARK = ROOT / "benchmarks" / "estimate_accuracy.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("estimate_accuracy", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recorded_file(tmp_path: Path, bench: ModuleType) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"info": {"id": "ses_x"}, "messages": bench.generate_session(1, steps=30)}))
    return path


@pytest.fixture(scope="module")
def result(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = recorded_file(tmp_path_factory.mktemp("rec"), bench)
    return bench.run([str(path)], generated_sessions=4)


def test_reports_mean_median_p95_for_each_path_and_estimator(result: dict[str, Any]) -> None:
    errors = result["generated"]["errors"]
    assert set(errors) == {"reported.fixed", "reported.calibrated", "history.fixed", "history.calibrated"}
    for stats in errors.values():
        assert set(stats) == {"n", "mean", "median", "p95"} and stats["n"] > 0


def test_calibrated_estimate_beats_the_fixed_ratios_on_generated_sessions(result: dict[str, Any]) -> None:
    errors = result["generated"]["errors"]
    assert errors["reported.calibrated"]["mean"] < errors["reported.fixed"]["mean"]
    assert errors["history.calibrated"]["mean"] < errors["history.fixed"]["mean"]


def test_calibrated_estimate_is_well_inside_the_seeds_30_percent_bar(result: dict[str, Any]) -> None:
    errors = result["generated"]["errors"]
    assert errors["reported.calibrated"]["p95"] < 3
    # the history path overcounts when a provider drops earlier thinking (safe side)
    assert errors["history.calibrated"]["p95"] < 10


def test_recorded_files_are_scored_per_file(result: dict[str, Any]) -> None:
    assert result["recorded"]["files"] == 1
    assert result["recorded"]["per_file"][0]["errors"]["reported.fixed"]["n"] == 29


def test_the_shipped_export_sample_shape_is_accepted(bench: ModuleType, tmp_path: Path) -> None:
    msgs = [
        {"info": {"id": "u", "role": "user"}, "parts": [{"type": "text", "text": "hello"}]},
        {"info": {"id": "a1", "role": "assistant", "tokens": {"input": 100, "output": 10, "cache": {"read": 0, "write": 0}}}, "parts": []},
        {"info": {"id": "a2", "role": "assistant", "tokens": {"input": 110, "output": 10, "cache": {"read": 0, "write": 0}}}, "parts": []},
    ]
    (tmp_path / "list.json").write_text(json.dumps(msgs))
    (tmp_path / "export.json").write_text(json.dumps({"info": {}, "messages": msgs}))
    out = bench.run([str(tmp_path / "list.json"), str(tmp_path / "export.json")], generated_sessions=1)
    assert out["recorded"]["errors"]["reported.fixed"] == {"n": 2, "mean": 0.0, "median": 0.0, "p95": 0.0}


def test_main_rejects_a_file_that_is_not_a_session(bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a session"}')
    assert bench.main(["--json", str(bad)]) == 2
    assert "expected an `opencode export` object" in capsys.readouterr().err


def test_main_prints_the_result_as_json(bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(bench, "GENERATED_SESSIONS", 1)
    monkeypatch.setattr(bench.run, "__defaults__", (1,))
    assert bench.main(["--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["generated"]["sessions"] == 1 and printed["recorded"]["files"] == 0
