"""R1, R18: bracket patterns cost work linear in their length, match as pathspec reads them, and warn nobody's log."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern

from dcp_plugin.config import globs
from dcp_plugin.config.loader import load_layer
from tests.support.config_host import Host, config_path, project, write

__all__ = ["project"]  # the fixture

# Python lines run (all of it is Python: our scan, pathspec's translation, and `re`'s parser and
# compiler) per character of a pattern, or per byte of a config file. Measured: at most ~155 per
# character (`"[" * 4000`); before the fix `"[" * 4000` alone ran ~20 million lines, quadratic in
# its length.
LINES_PER_CHAR = 250
FIXED_LINES = 20_000

# The characters a bracket pattern is made of, and a few plain ones.
GLOB_CHARS = "[]!^a*/\\-:?&~|"


def lines_run(work: Callable[[], Any]) -> int:
    """How many Python lines (and calls) ``work`` runs: a measure of its cost that does not depend on the machine."""
    count = 0

    def trace(_frame: FrameType, _event: str, _arg: Any) -> Any:
        nonlocal count
        count += 1
        return trace

    before = sys.gettrace()
    sys.settrace(trace)
    try:
        work()
    finally:
        sys.settrace(before)
    return count


def pattern_work(pattern: str) -> None:
    """All the host does with one pattern: weigh it, check and compile it (uncached); load_layer adds the rest."""
    globs.is_deep(pattern)
    globs._compile.__wrapped__(pattern, False)


hostile_patterns = st.builds(
    lambda unit, size, prefix: (prefix + unit * (size // len(unit) + 1))[:size],
    st.text(GLOB_CHARS, min_size=1, max_size=6),
    st.integers(500, globs.MAX_PATTERN_CHARS),
    st.sampled_from(["", "!", "**/", "/", "a/**/"]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_patterns)
def test_a_pattern_costs_work_linear_in_its_length(pattern: str) -> None:
    assert lines_run(lambda: pattern_work(pattern)) <= LINES_PER_CHAR * len(pattern) + FIXED_LINES


@pytest.mark.parametrize("unit", ["[", "[!", "[a", "![", "a[b"])
def test_the_audited_bracket_patterns_cost_work_linear_in_their_length(unit: str) -> None:
    pattern = (unit * 4000)[:3990]
    assert lines_run(lambda: pattern_work(pattern)) <= LINES_PER_CHAR * len(pattern) + FIXED_LINES


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(hostile_patterns, min_size=1, max_size=12))
def test_a_config_file_costs_work_linear_in_its_size(tmp_path: Path, patterns: list[str]) -> None:
    small, path = tmp_path / "small.jsonc", tmp_path / "dcp.jsonc"
    small.write_text('{"protectedFilePatterns": ["a"]}', encoding="utf-8")
    path.write_text(json.dumps({"protectedFilePatterns": patterns}), encoding="utf-8")
    globs._compile.cache_clear()
    base = lines_run(lambda: load_layer(small))  # what any file costs (and anything loaded once)
    globs._compile.cache_clear()
    assert lines_run(lambda: load_layer(path)) <= base + LINES_PER_CHAR * path.stat().st_size


def _pathspec_reads(pattern: str, path: str) -> bool | None:
    """Whether pathspec itself, given the pattern as written, matches ``path`` (None: it cannot compile it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return GitIgnoreBasicPattern(pattern).match_file(path) is not None
        except Exception:  # noqa: BLE001 - pathspec's own error, re.error and others
            return None


@settings(max_examples=400, deadline=None)
@given(st.text(GLOB_CHARS + "b", min_size=1, max_size=10), st.text("ab[]!^-:/&~|", min_size=1, max_size=8))
def test_a_pattern_matches_exactly_what_pathspec_reads_it_to_match(pattern: str, path: str) -> None:
    assume("***" not in pattern)  # a run of three stars is read as git reads it, not as pathspec does
    compiled = globs._compile(pattern, False)
    assume(not isinstance(compiled, str) or "wildcards" not in compiled)
    expected = _pathspec_reads(pattern, path)
    assert (None if isinstance(compiled, str) else compiled.match_file(path) is not None) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(GLOB_CHARS + "b=.", min_size=1, max_size=12))
def test_compiling_a_pattern_prints_no_warning(pattern: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        globs._compile.__wrapped__(pattern, False)
    assert [str(w.message) for w in caught] == []


def test_a_posix_class_pattern_prints_no_warning_into_the_host_log(project: Path) -> None:
    write(config_path(project), json.dumps({"protectedFilePatterns": ["[[:alpha:]]" * 50 + "x", "secrets/**"]}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        host = Host(project)
        assert not host.pruned("secrets/key.pem")
    assert [str(w.message) for w in caught] == []


def test_a_pattern_of_unclosed_brackets_is_used_as_literal_text_and_the_others_apply(project: Path) -> None:
    write(config_path(project), json.dumps({"protectedFilePatterns": ["[" * 3990, "notes[1.md", "secrets/**"]}))
    host = Host(project)
    assert (host.pruned("secrets/key.pem"), host.pruned("notes[1.md"), host.pruned("notes1.md")) == (False, False, True)


def test_validate_names_each_pattern_with_an_unclosed_bracket(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text(json.dumps({"protectedFilePatterns": ["secrets/**", "a[b" * 1330]}), encoding="utf-8")
    [problem] = load_layer(path).problems
    assert (problem.level, problem.key) == ("warning", "protectedFilePatterns[1]")
    assert "has 1,330 `[` without a closing `]`" in problem.text and "literal `[`" in problem.text


def test_many_patterns_with_unclosed_brackets_come_as_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    path.write_text(json.dumps({"protectedFilePatterns": [f"x{i}[" for i in range(900)]}), encoding="utf-8")
    [problem] = load_layer(path).problems
    assert problem.text.startswith("900 patterns have a `[` without a closing `]`: [0] \"x0[\"")


def test_a_segment_of_one_star_still_needs_a_directory_level_next_to_a_double_star() -> None:
    compiled = globs._compile("**/*/key.pem", False)
    assert not isinstance(compiled, str)
    assert (compiled.match_file("key.pem"), compiled.match_file("a/key.pem") is not None) == (None, True)


def test_patterns_past_the_total_character_cap_are_dropped_with_one_message(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    long = ["[" * 3990 + str(i) for i in range(250)]  # a 1 MiB file: 7.5 s to compile every one of them
    path.write_text(json.dumps({"protectedFilePatterns": ["secrets/**", *long]}), encoding="utf-8")
    layer = load_layer(path)
    assert layer.data is not None
    used = layer.data["protectedFilePatterns"]
    assert used == ["secrets/**", *long[: (globs.MAX_TOTAL_PATTERN_CHARS - 10) // 3991]]
    [cut] = [p for p in layer.problems if p.level == "error"]
    assert f"more than {globs.MAX_TOTAL_PATTERN_CHARS:,} characters of patterns" in cut.text and "242 more are ignored" in cut.text


def test_patterns_refused_for_their_wildcards_do_not_count_against_the_character_cap(tmp_path: Path) -> None:
    path = tmp_path / "dcp.jsonc"
    costly = ["*a" * 20 + f"b{i}" for i in range(900)]  # 43 characters each, all refused
    path.write_text(json.dumps({"protectedFilePatterns": [*costly, "secrets/**"]}), encoding="utf-8")
    layer = load_layer(path)
    assert layer.data is not None and layer.data["protectedFilePatterns"] == ["secrets/**"]
    assert not any("characters of patterns" in p.text for p in layer.problems)


def test_patterns_past_the_character_cap_are_dropped_without_being_scanned() -> None:
    long = ["[" * 3990 + str(i) for i in range(250)]  # scanning them all ran ~24 million lines
    globs.normalize.cache_clear()
    globs.shape.cache_clear()
    assert lines_run(lambda: globs.within_budget(long)) <= LINES_PER_CHAR * globs.MAX_TOTAL_PATTERN_CHARS // 4
