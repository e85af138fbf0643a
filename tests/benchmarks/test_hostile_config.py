"""benchmarks/hostile_config.py runs end to end (that it works and re-reads nothing, not how fast)."""

from __future__ import annotations

import pytest

from benchmarks.hostile_config import hostile_files, main, run

pytestmark = pytest.mark.slow  # a benchmark


def test_every_hostile_file_is_read_once_and_reported() -> None:
    rows = run(requests=2, only=["5,000-digit number", "too many wildcards", "20,000 unknown keys"])
    assert sorted(r["file"] for r in rows) == ["20,000 unknown keys", "5,000-digit number", "too many wildcards"]
    assert all(r["reads_after_first"] == 0 and r["messages"] == 1 for r in rows)


def test_the_hostile_files_stay_within_the_config_size_limit() -> None:
    from dcp_plugin.config.parse import MAX_FILE_BYTES

    assert all(len(build().encode("utf-8")) <= MAX_FILE_BYTES for build in hostile_files().values())


def test_the_benchmark_prints_a_row_per_file(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--requests", "1", "--only", "5,000-digit number"])
    rows = capsys.readouterr().out.splitlines()
    assert rows[2].startswith("5,000-digit number")


def test_the_benchmark_measures_a_new_path_as_one_re2_set_and_one_by_one() -> None:
    from benchmarks.hostile_config import new_path_ratio

    result = new_path_ratio(patterns=50, paths=1)
    assert result["re2"] is True and result["patterns"] == 50 and result["ratio"] is not None
