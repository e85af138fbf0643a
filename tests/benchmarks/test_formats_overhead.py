"""benchmarks/formats_overhead.py runs end to end on small sessions (that it works, not how fast)."""

from __future__ import annotations

import pytest

from benchmarks.formats_overhead import main

pytestmark = pytest.mark.slow  # a benchmark


def test_the_formats_benchmark_prints_a_row_per_size_and_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--sizes", "40", "--requests", "2"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split()[1] for row in rows] == ["openai_chat", "openai_responses", "anthropic"]
