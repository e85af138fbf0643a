"""benchmarks/session_isolation.py runs end to end on small sessions (that it works, not how fast)."""

from __future__ import annotations

import pytest

from benchmarks.session_isolation import main

pytestmark = pytest.mark.slow  # a benchmark


def test_the_session_isolation_benchmark_prints_the_wait_as_a_share_of_the_rebuild(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--size", "300", "--other", "20", "--requests", "2", "--pause-ms", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-3:] == ["longest", "/", "rebuild"]
    assert lines[2].split()[0] == "300" and lines[2].endswith("%")
    assert lines[3].startswith("target: the other session waits at most 10 % of the rebuild: ")
