"""The ratio fit: it recovers the characters per token reports imply, and README quotes what it measures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import ratio_fit
from tests.support.paths import ROOT


def message(n: int, role: str, parts: list[dict[str, Any]], prompt: int | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"id": f"msg_{n:03d}", "sessionID": "ses_r", "role": role, "time": {"created": n * 1000}}
    if prompt is not None:
        info["tokens"] = {"input": 2, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": prompt - 2}}
    return {"info": info, "parts": parts}


def session(overhead: int, outputs_per_char: float) -> list[dict[str, Any]]:
    """Steps that each read a file; every report is the overhead + text at chars/4 + outputs at ``outputs_per_char``."""
    messages = [message(0, "user", [{"type": "text", "text": "u" * 400}])]
    true_tokens = 100.0
    for n in range(1, 30):
        output = "x" * (300 * (1 + n % 7))
        messages.append(message(n, "assistant", [
            {"type": "text", "text": "a" * 80},
            {"type": "tool", "tool": "read", "callID": f"c{n}",
             "state": {"status": "completed", "input": {}, "output": output}},
        ], prompt=overhead + round(true_tokens)))
        true_tokens += 20 + 1 + len(output) * outputs_per_char  # text, the empty input "{}" (2 chars), the output
    return messages


def test_the_fit_recovers_the_tool_outputs_characters_per_token(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session(5_000, 1 / 2.5)))
    kinds = ratio_fit.run([str(path)])["kinds"]
    assert kinds["tool outputs"]["chars_per_token"] == pytest.approx(2.5, abs=0.02)


def test_fixed_ratios_that_match_the_reports_fit_as_multipliers_of_one(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session(5_000, 1 / 3)))
    assert ratio_fit.run([str(path)])["kinds"]["tool outputs"]["multiplier"] == pytest.approx(1.0, abs=0.01)


README = ROOT / "README.md"
CORPUS = sorted((ROOT.parent / "shared" / "corpus" / "dev").glob("*.json"))


@pytest.mark.skipif(not CORPUS, reason="the development corpus is not next to the project")
def test_readmes_fitted_ratios_are_the_ones_measured_on_the_development_corpus() -> None:
    kinds = ratio_fit.run([str(p) for p in CORPUS])["kinds"]
    text = " ".join(README.read_text().split())
    outputs, inputs = kinds["tool outputs"], kinds["tool inputs"]
    low, high = outputs["chars_per_token_leave_one_out"]
    assert f"tool outputs {outputs['chars_per_token']:.2f} characters per token ({low:.2f}-{high:.2f})" in text
    low, high = inputs["chars_per_token_leave_one_out"]
    assert f"tool inputs {inputs['chars_per_token']:.2f} ({low:.2f}-{high:.2f})" in text
    beyond = kinds["reported output beyond the parts"]
    low, high = beyond["leave_one_out"]
    assert f"counts {beyond['multiplier']:.2f} times ({low:.2f}-{high:.2f})" in text
