"""Hostile config files: linear to read, never blocking, one message per kind of problem, validate == host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dcp_plugin.config.loader import combine, load_layer
from dcp_plugin.config.parse import decode, parse_text, read_text
from dcp_plugin.config.source import ConfigSource
from dcp_plugin.config.validate import SUMMARY_LIMIT, validate_layer
from tests.support.helpers import run_bounded


def dcp(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "dcp_plugin.cli.main", *argv], capture_output=True, text=True,
                          encoding="utf-8", errors="backslashreplace", env=env, cwd=cwd, timeout=120)


# -- reading stays linear ------------------------------------------------------------------------
def test_many_unterminated_comments_are_read_in_linear_time() -> None:
    # 1 MiB of `/*`: the non-greedy comment regex rescanned to the end from each one (60 KB took 18 s).
    out = run_bounded(
        """
        from dcp_plugin.config.parse import parse_text
        (problem,) = parse_text("{" + "/* x\\n" * 200_000 + "}", "f").problems
        print(problem.line, problem.column, "never closed" in problem.text)
        """
    )
    assert out == "1 2 True"


def test_many_unterminated_escaped_quotes_are_read_in_linear_time() -> None:
    out = run_bounded(
        """
        from dcp_plugin.config.parse import parse_text
        parsed = parse_text('{"a": "' + '\\\\"' * 400_000 + '}', "f")
        print(parsed.data is None)
        """
    )
    assert out == "True"


def test_many_trailing_commas_are_read_in_linear_time() -> None:
    out = run_bounded(
        """
        from dcp_plugin.config.parse import parse_text
        data = parse_text('{"protectedFilePatterns": [' + '"a",' * 200_000 + ']}', "f").data
        print(len(data["protectedFilePatterns"]))
        """
    )
    assert out == "200000"


def test_an_unclosed_comment_in_a_small_file_is_left_to_json5() -> None:
    # JSON5 allows single-quoted strings, where `/*` is text: only json5 can tell
    assert parse_text("{a: '/*', b: 1}", "f").data == {"a": "/*", "b": 1}


# -- many problems of one kind ------------------------------------------------------------------
def test_many_unknown_keys_are_one_message() -> None:
    clean, problems = validate_layer({**{f"key{i}": i for i in range(20_000)}, "debug": True}, "f")
    assert clean == {"debug": True}
    (problem,) = problems
    assert problem.text == "20,000 unknown keys are ignored: `key0`, `key1`, `key2` and 19,997 more"


def test_a_few_unknown_keys_keep_their_own_messages_and_suggestions() -> None:
    _, problems = validate_layer({"debg": True, "enabld": False}, "f")
    assert [p.text for p in problems] == [
        "unknown key `debg` is ignored; did you mean `debug`?",
        "unknown key `enabld` is ignored; did you mean `enabled`?",
    ]


def test_many_dropped_list_entries_are_one_message() -> None:
    clean, problems = validate_layer({"protectedFilePatterns": ["ok/**"] + [""] * 500}, "f")
    assert clean == {"protectedFilePatterns": ["ok/**"]}
    (problem,) = problems
    assert problem.key == "protectedFilePatterns"
    assert problem.text.startswith("500 entries are dropped: entry 2 (\"\") is dropped: expected a non-empty string;")
    assert problem.text.endswith(f"and {500 - SUMMARY_LIMIT:,} more")


def test_a_list_longer_than_the_limit_keeps_its_first_entries() -> None:
    clean, problems = validate_layer({"protectedFilePatterns": [f"d{i}/**" for i in range(45_000)]}, "f")
    assert clean["protectedFilePatterns"] == [f"d{i}/**" for i in range(1000)]
    (problem,) = problems
    assert (problem.key, problem.text) == ("protectedFilePatterns", "holds 45,000 entries; only the first 1,000 are used, the rest are ignored")


# -- numbers ------------------------------------------------------------------------------------
def test_an_integer_too_long_to_convert_drops_only_its_key(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text('{"enabled": false,\n "strategies": {"purgeErrors": {"turns": ' + "9" * 5000 + "}}}")
    layer = load_layer(path)
    assert layer.data == {"enabled": False, "strategies": {"purgeErrors": {}}}
    (problem,) = layer.problems
    assert problem.key == "strategies.purgeErrors.turns"
    assert problem.text == "expected a whole number, got <a number with 5,000 digits>"


def test_a_whole_number_the_host_cannot_hold_fails_validation_at_its_file(tmp_path: Path) -> None:
    lower = tmp_path / "global.jsonc"
    lower.write_text('{"strategies": {"purgeErrors": {"turns": 6}}}')
    upper = tmp_path / "project.jsonc"
    upper.write_text('{"strategies": {"purgeErrors": {"turns": 1e308}}}')
    layers = [load_layer(lower), load_layer(upper)]
    effective = combine(layers)
    (problem,) = layers[1].problems
    assert effective.problems == []
    assert effective.config.strategies.purge_errors.turns == 6
    assert effective.origins["strategies.purgeErrors.turns"] == str(lower)
    assert problem.render(effective.values, effective.origins) == (
        f"dcp: {upper}: strategies.purgeErrors.turns: error: expected a whole number of a usable size, got 1e+308; "
        f"using 6 (from {lower})"
    )


def test_validate_and_the_host_report_the_same_for_a_huge_float(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".opencode").mkdir(parents=True)
    (project / ".opencode" / "dcp.jsonc").write_text('{"strategies": {"purgeErrors": {"turns": 1e308}}}')
    host: list[str] = []
    ConfigSource(project, lambda _s, text: host.append(text), create_global=False, env={"HOME": str(tmp_path)}).get()
    validate = dcp("config", "validate", str(project / ".opencode" / "dcp.jsonc"))
    assert validate.returncode == 1
    assert validate.stdout.splitlines()[0] == host[0]


# -- encodings and invisible characters ----------------------------------------------------------
def test_nul_bytes_say_what_is_wrong_and_where() -> None:
    text, problem = decode(b'{"enabled":\n \x00false}', "f")
    assert text is None and problem is not None
    assert (problem.line, problem.column) == (2, 2)
    assert problem.text.startswith("contains a NUL byte")


def test_utf16_without_a_byte_order_mark_is_named() -> None:
    text, problem = decode('{"enabled": false}'.encode("utf-16-le"), "f")
    assert text is None and problem is not None
    assert problem.text.startswith("contains NUL bytes: it looks like UTF-16 saved without a byte-order mark; save it as UTF-8")


def test_a_control_character_in_json5_is_named_not_printed_raw() -> None:
    (problem,) = parse_text("{a:\x1b}", "f").problems
    assert "unexpected control character U+001B" in problem.text and "\x1b" not in problem.render()


def test_validate_prints_a_lone_surrogate_escaped_instead_of_crashing(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text('{"\\ud800": 1, "debug": "\\udc00"}')
    result = dcp("config", "validate", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"dcp: {path}: debug: error: expected true or false, got \"\\udc00\"; using false (the default)" in result.stdout
    assert "unknown key `\\ud800` is ignored" in result.stdout


def test_control_characters_in_a_key_are_escaped_in_messages() -> None:
    _, (problem,) = validate_layer({"x\x1b[2Jy\nz": 1}, "f")
    assert problem.render() == "dcp: f: x\\x1b[2Jy\\nz: warning: unknown key `x\\x1b[2Jy\\nz` is ignored"


# -- files that would block ----------------------------------------------------------------------
def test_a_config_symlinked_to_a_fifo_does_not_hang_the_host(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".opencode").mkdir(parents=True)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (project / ".opencode" / "dcp.jsonc").symlink_to(fifo)
    out = run_bounded(
        f"""
        from pathlib import Path
        from dcp_plugin.config.source import ConfigSource
        seen = []
        config = ConfigSource(Path({str(project)!r}), lambda _s, t: seen.append(t), create_global=False, env={{}}).get()
        print(config.enabled, "not a regular file" in seen[0])
        """,
        seconds=30,
    )
    assert out == "True True"


def test_a_file_that_looks_regular_but_blocks_when_read_is_not_read(tmp_path: Path) -> None:
    # /proc/kmsg (root in a container) stats as an empty regular file and blocks when read; a FIFO
    # behind a stat that lies stands in for it, and for a file swapped after the first stat.
    fifo = tmp_path / "kmsg"
    os.mkfifo(fifo)
    out = run_bounded(
        f"""
        import os
        from pathlib import Path
        from dcp_plugin.config.parse import read_text
        fake = os.stat_result((0o100600, 1, 1, 1, 0, 0, 0, 0, 0, 0))
        text, problem = read_text(Path({str(fifo)!r}), fake)
        print(text, problem.text.split(";")[0])
        """,
        seconds=30,
    )
    assert out == "None is not a regular file"


def test_an_empty_regular_file_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dcp_plugin.config import parse

    path = tmp_path / "dcp.jsonc"
    path.write_text("")
    monkeypatch.setattr(parse, "_read_bounded", lambda fd: pytest.fail("an empty file was read"))
    assert read_text(path) == ("", None)


def test_a_hostile_file_is_parsed_once_then_costs_a_stat_per_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dcp_plugin.config import source

    project = tmp_path / "proj"
    (project / ".opencode").mkdir(parents=True)
    (project / ".opencode" / "dcp.jsonc").write_text(json.dumps({f"k{i}": i for i in range(5000)}))
    loads: list[Path] = []
    real = source.load_layer
    monkeypatch.setattr(source, "load_layer", lambda path, st=None: loads.append(path) or real(path, st))
    messages: list[str] = []
    config_source = ConfigSource(project, lambda _s, t: messages.append(t), create_global=False, env={"HOME": str(tmp_path)})
    for _ in range(20):
        config_source.get()
    assert loads == [project / ".opencode" / "dcp.jsonc"] and len(messages) == 1
