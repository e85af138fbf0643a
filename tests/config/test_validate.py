"""Checking one layer against the schema: every error reported, bad keys dropped, the rest kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.config.problems import Problem, show_value
from dcp_plugin.config.validate import LEGACY_TEXT, pattern_problem, validate_layer

F = "/p/.opencode/dcp.jsonc"


def check(data: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    return validate_layer(data, F)


def messages(problems: list[Problem]) -> list[str]:
    return [p.render() for p in problems]


def test_valid_layer_is_kept_whole_without_problems() -> None:
    data = {"$schema": "x", "enabled": False, "strategies": {"purgeErrors": {"turns": 2}}}
    clean, problems = check(dict(data))
    assert clean == data and problems == []


def test_wrong_type_is_dropped_and_named_by_key_path() -> None:
    clean, problems = check({"enabled": "yes", "debug": True})
    assert clean == {"debug": True}
    assert messages(problems) == [f'dcp: {F}: enabled: error: expected true or false, got "yes"']


def test_out_of_range_number_names_the_minimum() -> None:
    clean, (problem,) = check({"strategies": {"purgeErrors": {"turns": 0, "enabled": False}}})
    assert clean == {"strategies": {"purgeErrors": {"enabled": False}}}
    assert problem.key == "strategies.purgeErrors.turns"
    assert problem.text == "expected a whole number of at least 1, got 0"
    assert problem.fallback == ("strategies", "purgeErrors", "turns")


def test_fractional_turns_is_a_type_error() -> None:
    _, (problem,) = check({"turnProtection": {"turns": 2.5}})
    assert problem.text == "expected a whole number, got 2.5"


def test_boolean_is_not_accepted_as_a_number() -> None:
    _, (problem,) = check({"turnProtection": {"turns": True}})
    assert problem.key == "turnProtection.turns"


def test_invalid_enum_lists_the_allowed_values() -> None:
    _, (problem,) = check({"pruneNotification": "loud"})
    assert problem.text == 'expected one of "off", "minimal", "detailed", got "loud"'


def test_section_of_the_wrong_type_is_dropped() -> None:
    clean, (problem,) = check({"strategies": ["deduplication"], "debug": True})
    assert clean == {"debug": True}
    assert (problem.key, problem.text) == ("strategies", 'expected a section { ... }, got ["deduplication"]')


def test_all_errors_are_reported_at_once() -> None:
    _, problems = check({"enabled": 1, "debug": "no", "pruneNotification": 3, "turnProtection": {"turns": -1}})
    assert sorted(str(p.key) for p in problems) == ["debug", "enabled", "pruneNotification", "turnProtection.turns"]


def test_bad_list_entry_is_dropped_and_the_rest_of_the_list_kept() -> None:
    clean, problems = check({"commands": {"protectedTools": ["bash", 3, "", "grep"]}})
    assert clean == {"commands": {"protectedTools": ["bash", "grep"]}}
    assert [p.text for p in problems] == [
        "entry 2 (3) is dropped: expected a string",
        'entry 3 ("") is dropped: expected a non-empty string',
    ]
    assert {p.key for p in problems} == {"commands.protectedTools"}


@pytest.mark.parametrize("pattern", ["!", "src\\", "[z-a].py", "#just a comment", "   "])
def test_invalid_glob_pattern_is_dropped_with_a_reason(pattern: str) -> None:
    clean, (problem,) = check({"protectedFilePatterns": ["src/**", pattern, "*.lock"]})
    assert clean == {"protectedFilePatterns": ["src/**", "*.lock"]}
    assert problem.key == "protectedFilePatterns"
    assert problem.text.startswith(f"entry 2 ({show_value(pattern)}) is dropped: it ")


def test_valid_glob_patterns_pass() -> None:
    for pattern in ["src/**", "*.lock", "/docs/", "!keep.txt", "**/secret*", "a/[bc]/d"]:
        assert pattern_problem(pattern) is None


def test_unknown_key_is_a_warning_with_the_closest_key() -> None:
    clean, (problem,) = check({"strategies": {"purgeError": {"turns": 2}}, "debug": True})
    assert clean == {"strategies": {}, "debug": True}
    assert problem.level == "warning"
    assert problem.render() == (
        f"dcp: {F}: strategies.purgeError: warning: unknown key `purgeError` is ignored; "
        "did you mean `strategies.purgeErrors`?"
    )


def test_unknown_key_suggestion_ignores_case() -> None:
    _, (problem,) = check({"PruneNotification": "off"})
    assert problem.text.endswith("did you mean `pruneNotification`?")


def test_key_at_the_wrong_level_suggests_where_it_belongs() -> None:
    _, (problem,) = check({"purgeErrors": {"turns": 2}})
    assert problem.text.endswith("did you mean `strategies.purgeErrors`?")


def test_ambiguous_misplaced_key_suggests_both_places() -> None:
    _, (problem,) = check({"turns": 3})
    assert problem.text.endswith("did you mean `strategies.purgeErrors.turns` or `turnProtection.turns`?")


def test_unknown_key_without_a_close_match_has_no_suggestion() -> None:
    _, (problem,) = check({"zzzzzz": 1})
    assert problem.text == "unknown key `zzzzzz` is ignored"


def test_legacy_threshold_key_anywhere_gives_exactly_one_warning() -> None:
    data = {
        "contextPercentageThreshold": 0.8,
        "strategies": {"purgeErrors": {"contextPercentageThreshold": 0.5, "turns": 2}},
        "contextBudget": {"compaction": {"contextPercentageThreshold": 1}},
        "someUnknown": [{"contextPercentageThreshold": 2}],
    }
    clean, problems = check(data)
    legacy = [p for p in problems if LEGACY_TEXT in p.text]
    assert len(legacy) == 1 and legacy[0].level == "warning"
    assert "`strategies.purgeErrors.contextPercentageThreshold`" in legacy[0].text
    assert clean == {"strategies": {"purgeErrors": {"turns": 2}}, "contextBudget": {"compaction": {}}}
    assert not any("contextPercentageThreshold" in (p.key or "") for p in problems)


def test_deeply_nested_junk_is_dropped_without_recursion_error() -> None:
    junk: Any = []
    for _ in range(900):
        junk = [junk]
    clean, problems = check({"debug": junk, "enabled": False, "junk": {"x": junk}})
    assert clean == {"enabled": False}
    assert {p.key for p in problems} == {"debug", "junk"}
    assert "got [[[[…]]]]" in next(p.text for p in problems if p.key == "debug")


def test_huge_value_is_shown_shortened() -> None:
    _, (problem,) = check({"pruneNotification": "x" * 100_000})
    assert len(problem.render()) < 250


def test_fallback_names_the_value_used_instead() -> None:
    _, (problem,) = check({"strategies": {"purgeErrors": {"turns": 0}}})
    effective = {"strategies": {"purgeErrors": {"turns": 6}}}
    origins = {"strategies.purgeErrors.turns": "/home/u/.config/opencode/dcp.jsonc"}
    assert problem.render(effective, origins).endswith("; using 6 (from /home/u/.config/opencode/dcp.jsonc)")
    assert problem.render(effective, {}).endswith("; using 6 (the default)")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=12,
)
known = st.sampled_from(["enabled", "debug", "pruneNotification", "commands", "turnProtection", "protectedFilePatterns", "strategies", "contextBudget", "$schema"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(known | st.text(max_size=8), json_values, max_size=6))
def test_what_validation_keeps_is_always_valid(data: dict[str, Any]) -> None:
    clean, _ = check(data)
    again, problems = check(clean)
    assert again == clean and problems == []


def test_only_the_first_patterns_crossing_directories_twice_are_used() -> None:
    from dcp_plugin.config.globs import MAX_DEEP_PATTERNS, compile_spec
    from dcp_plugin.config.validate import validate_layer

    deep = [f"**/d{i}/**/x" for i in range(MAX_DEEP_PATTERNS + 4)]
    data, problems = validate_layer({"protectedFilePatterns": ["*.lock", *deep]}, "f.jsonc")
    assert data["protectedFilePatterns"] == ["*.lock", *deep[:MAX_DEEP_PATTERNS]]
    [problem] = problems
    assert "4 more are ignored" in problem.text and problem.key == "protectedFilePatterns"
    # The host holds the same line even for a list that was never validated.
    spec = compile_spec(("*.lock", *deep), False)
    assert spec is not None and len(spec.patterns) == MAX_DEEP_PATTERNS + 1
