"""R16: a new path costs the same against 1,000 protected patterns as against a few: one RE2 set, linear in the path."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.config import globs
from dcp_plugin.config.globs import PatternSet, compile_spec
from tests.config.test_brackets import GLOB_CHARS, lines_run

# Python lines one match of a new path runs, whatever the number of patterns: matched one by one,
# 1,000 patterns ran about 5 lines each.
LINES_PER_MATCH = 200


def legal_patterns(count: int) -> tuple[str, ...]:
    """``count`` patterns at the wildcard limit, each slow to reject for a crafted name in Python's `re`."""
    return tuple(f"**/*a*b{i}" for i in range(count))


def test_the_installed_dependencies_match_patterns_as_one_re2_set() -> None:
    spec = compile_spec(legal_patterns(3), False)
    assert spec is not None and spec.uses_re2


def test_a_new_path_runs_as_few_lines_against_1000_patterns_as_against_3() -> None:
    path = "src/" + "ab" * 120
    many, few = compile_spec(legal_patterns(1000), False), compile_spec(legal_patterns(3), False)
    assert many is not None and few is not None
    assert lines_run(lambda: many.match_file(path)) <= LINES_PER_MATCH
    assert lines_run(lambda: few.match_file(path)) <= LINES_PER_MATCH


def test_a_path_re2_cannot_encode_is_matched_by_python() -> None:
    spec = compile_spec(("secrets/**", "!secrets/open*"), False)
    assert spec is not None
    assert (spec.match_file("secrets/\udc80key"), spec.match_file("secrets/open\udc80")) == (True, False)


def test_without_re2_the_patterns_are_matched_by_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globs, "_re2_spec", lambda _patterns: None)
    spec = compile_spec(("secrets/**", "!secrets/open*"), False)
    assert spec is not None and not spec.uses_re2
    assert (spec.match_file("secrets/key"), spec.match_file("secrets/open.txt")) == (True, False)


def _python_only(patterns: list[str], ignore_case: bool) -> PatternSet | None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(globs, "_re2_spec", lambda _patterns: None)
        return compile_spec(tuple(patterns), ignore_case)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(GLOB_CHARS + "b.", min_size=1, max_size=8), min_size=1, max_size=6),
    st.text("ab.[]!^-:/&~|", min_size=1, max_size=10),
    st.booleans(),
)
def test_the_re2_set_gives_every_path_the_verdict_python_gives(patterns: list[str], path: str, ignore_case: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = compile_spec(tuple(patterns), ignore_case)
        slow = _python_only(patterns, ignore_case)
    assert (fast is None) == (slow is None)
    if fast is not None and slow is not None:
        assert fast.match_file(path) == slow.match_file(path)
