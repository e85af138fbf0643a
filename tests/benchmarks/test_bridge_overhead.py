"""benchmarks/bridge_overhead.py runs end to end on a small session (that it works, not how fast)."""

from __future__ import annotations

import pytest

from benchmarks.bridge_overhead import main

pytestmark = pytest.mark.slow  # a benchmark (a real bridge process)


def test_the_bridge_overhead_benchmark_prints_a_row_per_size(capsys: pytest.CaptureFixture[str]):
    assert main(["--sizes", "30,60", "--requests", "3"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [row.split()[0] for row in rows[2:]] == ["30", "60"]
