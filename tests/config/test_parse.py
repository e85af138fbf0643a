"""Reading and parsing one dcp.jsonc: JSON5 syntax, positions of syntax errors, unusable files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.config import parse
from dcp_plugin.config.parse import EMPTY, MAX_FILE_BYTES, blank_comments, parse_text, read_text
from dcp_plugin.config.problems import UNUSABLE


def test_comments_and_trailing_commas_are_accepted() -> None:
    text = '// top\n{\n  /* block */ "enabled": false, // end\n  "protectedFilePatterns": ["a", ],\n}\n'
    assert parse_text(text, "f").data == {"enabled": False, "protectedFilePatterns": ["a"]}


def test_json5_syntax_beyond_comments_is_accepted() -> None:
    assert parse_text("{enabled: false, pruneNotification: 'off'}", "f").data == {
        "enabled": False,
        "pruneNotification": "off",
    }


def test_comment_markers_inside_strings_are_kept() -> None:
    assert parse_text('{"a": "http://x/*y*/", "b": "z,]"}', "f").data == {"a": "http://x/*y*/", "b": "z,]"}


def test_blanking_comments_keeps_every_position() -> None:
    text = '{ // c\n "a": [1, /* x\n y */ 2,],\n}'
    blanked = blank_comments(text)
    assert len(blanked) == len(text)
    assert [i for i, c in enumerate(text) if c == "\n"] == [i for i, c in enumerate(blanked) if c == "\n"]


def test_an_empty_file_is_a_warning_and_cannot_be_used() -> None:
    parsed = parse_text("", "/p/dcp.jsonc")
    assert parsed.data is None
    assert [p.level for p in parsed.problems] == ["warning"]
    assert "is empty or holds only comments (a save in progress?); write `{}`" in parsed.problems[0].render()


def test_a_comments_only_file_is_a_warning_and_cannot_be_used() -> None:
    parsed = parse_text("// nothing here\n/* still nothing */\n", "f")
    assert parsed.data is None
    assert [p.level for p in parsed.problems] == ["warning"]


@pytest.mark.parametrize("newline", ["\r", "\u2028", "\u2029", "\r\n"])
def test_a_line_comment_ends_at_any_json5_line_terminator(newline: str) -> None:
    parsed = parse_text(f'// protections{newline}{{"protectedFilePatterns": ["secrets/**"]}}{newline}', "f")
    assert parsed.data == {"protectedFilePatterns": ["secrets/**"]}


@pytest.mark.parametrize("newline", ["\r", "\u2028", "\u2029"])
def test_a_file_too_big_for_json5_with_line_comments_ended_by_any_terminator_is_read(newline: str) -> None:
    padding = f"// padding{newline}" * 3000  # past the size JSON5 syntax is accepted in
    parsed = parse_text(f'{padding}{{"protectedFilePatterns": ["secrets/**"]}}', "f")
    assert parsed.data == {"protectedFilePatterns": ["secrets/**"]}


def test_syntax_error_names_line_and_column_and_skips_the_file() -> None:
    parsed = parse_text('{\n  "enabled": true\n  "debug": true\n}', "/p/dcp.jsonc")
    assert parsed.data is None
    (problem,) = parsed.problems
    assert (problem.level, problem.line, problem.column) == ("error", 3, 3)
    assert problem.render().startswith("dcp: /p/dcp.jsonc:3:3: error: syntax error")
    assert UNUSABLE in problem.render()


def test_unterminated_object_says_end_of_file() -> None:
    (problem,) = parse_text('{"enabled": true,\n', "f").problems
    assert problem.line == 2 and "unexpected end of file" in problem.text


def test_trailing_garbage_is_a_syntax_error_at_its_position() -> None:
    (problem,) = parse_text('{"a": 1} x', "f").problems
    assert (problem.line, problem.column) == (1, 10)


def test_lone_comma_in_a_list_stays_a_syntax_error() -> None:
    assert parse_text('{"a": [,]}', "f").data is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[1, 2]", "a list"), ('"text"', "a string"), ("3", "a number"), ("true", "a boolean"), ("null", "null")],
)
def test_non_object_top_level_skips_the_file(text: str, kind: str) -> None:
    parsed = parse_text(text, "f")
    assert parsed.data is None
    assert f"must hold an object {{ ... }} at the top level, found {kind}" in parsed.problems[0].text


def test_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_bytes(b'\xef\xbb\xbf{"debug": true}')
    text, problem = read_text(path)
    assert problem is None and text is not None
    assert parse_text(text, str(path)).data == {"debug": True}


def test_utf16_with_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_bytes('{"debug": true}'.encode("utf-16"))
    text, _ = read_text(path)
    assert text is not None and parse_text(text, "f").data == {"debug": True}


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_bytes(b'{\n  "a": "\xff"\n}')
    text, problem = read_text(path)
    assert text is None and problem is not None
    assert (problem.line, problem.column) == (2, 9)
    assert "not valid UTF-8 (byte 0xff here)" in problem.text


def test_directory_where_the_file_should_be(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.mkdir()
    text, problem = read_text(path)
    assert text is None and problem is not None
    assert problem.text.startswith("is a directory, not a file")


def test_fifo_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    os.mkfifo(path)
    text, problem = read_text(path)  # reading would block forever
    assert text is None and problem is not None and "not a regular file" in problem.text


def test_file_over_one_mebibyte_is_skipped_with_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text("{}" + " " * MAX_FILE_BYTES)
    text, problem = read_text(path)
    assert text is None and problem is not None
    assert "1,048,576-byte (1 MiB) limit" in problem.text


def test_big_commented_file_under_the_limit_is_read(tmp_path: Path) -> None:
    body = ",\n".join(f'  // pattern {i}\n  "p{i}/**"' for i in range(20000))
    text = '{"protectedFilePatterns": [\n' + body + ",\n]}"
    assert 64 * 1024 < len(text) < MAX_FILE_BYTES
    data = parse_text(text, "f").data
    assert data is not None and len(data["protectedFilePatterns"]) == 20000


def test_big_file_with_other_json5_syntax_names_the_position(tmp_path: Path) -> None:
    text = '{"protectedFilePatterns": [' + '"a/**",' * 400 + "],\nenabled: true}"
    (problem,) = parse_text(text, "f").problems
    assert (problem.line, problem.column) == (2, 1)
    assert "more than 2,048 characters outside comments" in problem.text


def test_a_commented_file_may_still_use_json5_syntax() -> None:
    text = "// " + "x" * 5_000 + "\n{enabled: false, /* " + "y" * 5_000 + " */ debug: true}"
    assert parse_text(text, "f").data == {"enabled": False, "debug": True}


def test_unreadable_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text("{}")

    def denied(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(parse, "open_file", denied)
    text, problem = read_text(path)
    assert text is None and problem is not None
    assert problem.text.startswith("cannot be read (Permission denied)")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_file_without_read_permission_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text("{}")
    path.chmod(0)
    _, problem = read_text(path)
    assert problem is not None and "cannot be read" in problem.text


def test_deep_nesting_beyond_the_parser_is_reported_not_raised() -> None:
    parsed = parse_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "f")
    assert parsed.data is None
    assert "nested too deeply" in parsed.problems[0].text


def test_deep_nesting_with_json5_syntax_is_reported_not_raised() -> None:
    parsed = parse_text("{a: " + "[" * 1000 + "]" * 1000 + "}", "f")
    assert parsed.data is None
    assert "nested too deeply" in parsed.problems[0].text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]",:/*\n tab01-ex\\\'')), max_size=60))
def test_parsing_never_raises(text: str) -> None:
    parsed = parse_text(text, "f")
    unusable = any(p.level == "error" or p.text.startswith(EMPTY) for p in parsed.problems)
    assert (parsed.data is None) == unusable


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8), lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=10), max_size=4))
def test_any_json_object_parses_to_itself(data: dict[str, object]) -> None:
    assert parse_text(json.dumps(data, indent=1), "f").data == data


# hints for the usual syntax slips


@pytest.mark.parametrize(
    "text",
    [
        '{"debug": false\n "enabled": false}',
        '{"protectedFilePatterns": ["a" "b"]}',
        '{"strategies": {"purgeErrors": {"turns": 2}}\n "debug": true}',
        '{"debug": true // why\n "enabled": false}',
    ],
)
def test_a_missing_comma_is_named(text: str) -> None:
    (problem,) = parse_text(text, "f").problems
    assert "missing comma between values?" in problem.text
    assert '"""' not in problem.text


def test_the_missing_comma_hint_keeps_the_position_of_the_value_after_it() -> None:
    (problem,) = parse_text('{"debug": false\n  "enabled": false}', "f").problems
    assert (problem.line, problem.column) == (2, 3)


def test_a_missing_colon_after_a_key_is_named() -> None:
    (problem,) = parse_text('{"debug": true, "enabled" false}', "f").problems
    assert "missing `:` between the key and its value?" in problem.text


def test_an_unexpected_closing_bracket_gets_no_comma_hint() -> None:
    (problem,) = parse_text('{"debug": true}}', "f").problems
    assert "missing" not in problem.text and "unexpected `}`" in problem.text
