"""N5: `/*` inside a single-quoted JSON5 string is a string, so the JSON5 size limit (and its message) holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcp_plugin.cli.main import main

SINGLE_QUOTED = "{protectedFilePatterns: ['secrets/**', " + "1," * 7_000 + "]}"


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """What `dcp config validate PATH` prints (in this process; tests/test_config_hostile.py runs it as a command)."""
    main(["config", "validate", str(path)])
    done = capsys.readouterr()
    return done.out + done.err


def test_a_comment_opener_inside_a_single_quoted_string_does_not_hide_the_json5_size_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text(SINGLE_QUOTED)
    out = validate(path, capsys)
    assert "no other JSON5 syntax" in out and "never closed" not in out


def test_a_small_json5_file_with_a_comment_opener_in_a_single_quoted_string_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text("{protectedFilePatterns: ['secrets/**', 'keys/*'], /* a comment */ enabled: true,}")
    out = validate(path, capsys)
    assert "ok: 1 file valid" in out, out
