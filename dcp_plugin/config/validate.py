"""Check one parsed config layer against the schema and keep only the keys that are valid."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator
from typing import Any

import jsonschema
from pydantic import ValidationError

from dcp_plugin.config import schema as schema_mod
from dcp_plugin.config.globs import (
    MAX_DEEP_PATTERNS,
    MAX_TOTAL_PATTERN_CHARS,
    pattern_problem,
    unclosed_brackets,
    within_budget,
)
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.problems import UNUSABLE, Problem, lookup, show_value
from dcp_plugin.config.schema import KeyPath, dotted

PATTERNS_KEY = "protectedFilePatterns"

LEGACY_KEY = "contextPercentageThreshold"
LEGACY_TEXT = "was removed; thresholds are now computed internally"
# The schema is a few levels deep; anything deeper is junk and is cut off here so that
# no later step (jsonschema's messages, rendering) can hit the recursion limit.
MAX_DEPTH = 32
TOO_DEEP = "<nested too deeply>"
# More problems of one kind than this in one place (unknown keys of a section, dropped entries
# of a list) are folded into one message: 20,000 separate notifications help nobody.
SUMMARY_LIMIT = 3
# Each round drops every value the model rejects; a second round only if dropping exposed more.
MAX_MODEL_ROUNDS = 5
_MODEL_EXPECTED = {
    "int_parsing_size": "a whole number of a usable size",
    "int_from_float": "a whole number",
    "finite_number": "a finite number",
}

_TYPE_NAMES = {
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "string": "a string",
    "array": "a list [ ... ]",
    "object": "a section { ... }",
    "null": "null",
}

Path = list[str | int]


def _format_checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker()

    def _is_pattern(value: object) -> bool:
        if not isinstance(value, str) or value == "":
            return True  # type and minLength report these
        reason = pattern_problem(value)
        if reason:
            raise ValueError(reason)
        return True

    checker.checks("gitignore-pattern", raises=ValueError)(_is_pattern)
    return checker


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema_mod.schema(), format_checker=_format_checker())


def validate_layer(data: dict[str, Any], name: str) -> tuple[dict[str, Any], list[Problem]]:
    """The layer with every invalid key or list entry removed, and one problem per removal.

    `data` is modified in place and returned. All errors are reported, not just the first.
    """
    problems: list[Problem] = cut_long_lists(data, name) + cut_deep_patterns(data, name)
    legacy = remove_key_everywhere(data, LEGACY_KEY)
    if legacy:
        where = ", ".join(f"`{dotted(p)}`" for p in legacy)
        problems.append(
            Problem("warning", name, f"`{LEGACY_KEY}` {LEGACY_TEXT} from the model's window, so it is ignored (found at {where})")
        )
    cut_deep(data, MAX_DEPTH)
    try:
        errors = list(_validator().iter_errors(data))
    except RecursionError:
        return {}, problems + [Problem("error", name, f"is nested too deeply to check; {UNUSABLE}")]
    removals: dict[tuple[str | int, ...], None] = {}
    unknown: dict[tuple[str | int, ...], list[str]] = {}
    entries: dict[tuple[str | int, ...], list[Problem]] = {}
    for error in errors:
        path: Path = list(error.absolute_path)
        if error.validator == "additionalProperties":
            for key in _unknown_keys(error):
                removals.setdefault(tuple(path + [key]), None)
                unknown.setdefault(tuple(path), []).append(key)
            continue
        if tuple(path) in removals or not path:
            continue
        removals[tuple(path)] = None
        problem = _schema_problem(name, path, error)
        if isinstance(path[-1], int):
            entries.setdefault(tuple(path[:-1]), []).append(problem)
        else:
            problems.append(problem)
    for parent, keys in unknown.items():
        problems.extend(_unknown_problems(name, list(parent), keys))
    for group in entries.values():
        problems.extend(summarize(group))
    for path_key in sorted(removals, key=_sort_key, reverse=True):
        _delete(data, list(path_key))
    problems.extend(model_problems(data, name))
    problems.extend(bracket_warnings(data, name))
    return data, problems


def bracket_warnings(data: dict[str, Any], name: str) -> list[Problem]:
    """Kept patterns with a `[` that no `]` closes: each is used, as a literal `[`, which is likely not what was meant."""
    value = data.get(PATTERNS_KEY)
    if not isinstance(value, list):
        return []
    found = [(i, p, n) for i, p in enumerate(value) if isinstance(p, str) and (n := unclosed_brackets(p))]
    hint = "each such `[` matches a literal `[` (write `\\[` to say so, or close the set with `]`)"
    if len(found) > SUMMARY_LIMIT:
        shown = ", ".join(f"[{i}] {show_value(p, 40)}" for i, p, _ in found[:SUMMARY_LIMIT])
        text = f"{len(found):,} patterns have a `[` without a closing `]`: {shown} and {len(found) - SUMMARY_LIMIT:,} more; {hint}"
        return [Problem("warning", name, text, key=PATTERNS_KEY)]
    return [
        Problem("warning", name, f"{show_value(p)} has {n:,} `[` without a closing `]`; {hint}", key=f"{PATTERNS_KEY}[{i}]")
        for i, p, n in found
    ]


def cut_long_lists(data: dict[str, Any], name: str) -> list[Problem]:
    """Lists longer than the schema's maxItems cut to their first entries, before anything checks them."""
    problems: list[Problem] = []
    for key_path, node in schema_mod.iter_keys():
        limit = node.get("maxItems")
        found, value = lookup(data, key_path)
        if found and isinstance(value, list) and isinstance(limit, int) and len(value) > limit:
            text = f"holds {len(value):,} entries; only the first {limit:,} are used, the rest are ignored"
            problems.append(Problem("error", name, text, key=dotted(key_path)))
            del value[limit:]
    return problems


def cut_deep_patterns(data: dict[str, Any], name: str) -> list[Problem]:
    """protectedFilePatterns past the budgets (patterns with two `**`, characters of all patterns) dropped, with a message each."""
    value = data.get(PATTERNS_KEY)
    if not isinstance(value, list):
        return []
    budgeted = within_budget(value)
    value[:] = budgeted.kept
    problems = []
    if budgeted.deep_dropped:
        text = (
            f"has more than {MAX_DEEP_PATTERNS} patterns that cross directories twice (like `**/a/**/b`), each slow "
            f"to match; the first {MAX_DEEP_PATTERNS} are used, {budgeted.deep_dropped:,} more are ignored"
        )
        problems.append(Problem("error", name, text, key=PATTERNS_KEY))
    if budgeted.long_dropped:
        text = (
            f"holds more than {MAX_TOTAL_PATTERN_CHARS:,} characters of patterns, which would be slow to compile; "
            f"the patterns within that are used, {budgeted.long_dropped:,} more are ignored"
        )
        problems.append(Problem("error", name, text, key=PATTERNS_KEY))
    return problems


def _unknown_problems(name: str, parent: Path, keys: list[str]) -> list[Problem]:
    """One warning per unknown key (with a suggestion), or one for all of them when there are many."""
    if len(keys) <= SUMMARY_LIMIT:
        return [unknown_key_problem(name, [*parent, key]) for key in keys]
    shown = ", ".join(f"`{key}`" for key in keys[:SUMMARY_LIMIT])
    where = f"in `{dotted(parent)}` " if parent else ""
    text = f"{len(keys):,} unknown keys {where}are ignored: {shown} and {len(keys) - SUMMARY_LIMIT:,} more"
    return [Problem("warning", name, text)]


def summarize(group: list[Problem]) -> list[Problem]:
    """Problems of one list's entries as they are, or folded into one when there are many."""
    if len(group) <= SUMMARY_LIMIT:
        return group
    first = group[0]
    shown = "; ".join(p.text for p in group[:SUMMARY_LIMIT])
    text = f"{len(group):,} entries are dropped: {shown}; and {len(group) - SUMMARY_LIMIT:,} more"
    return [Problem(first.level, first.file, text, key=first.key, fallback=first.fallback)]


def model_problems(data: dict[str, Any], name: str) -> list[Problem]:
    """Values the schema accepts but the typed config cannot hold (1e308 as a whole number), dropped.

    The host builds its config with the model, so checking each layer with it here makes
    `dcp config validate` report exactly what the host does, at the right file.
    """
    problems: list[Problem] = []
    for _ in range(MAX_MODEL_ROUNDS):
        try:
            DcpConfig.model_validate(data)
            return problems
        except ValidationError as exc:
            for error in exc.errors():
                path: Path = [part for part in error["loc"] if isinstance(part, (str, int))]
                key_path = [str(part) for part in path if not isinstance(part, int)]
                got = show_value(error.get("input"))
                expected = _MODEL_EXPECTED.get(error["type"]) or _lower_first(error["msg"])
                problems.append(Problem("error", name, f"expected {expected}, got {got}", key=dotted(key_path), fallback=tuple(key_path)))
                _delete(data, path)
    return problems


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _sort_key(path: tuple[str | int, ...]) -> tuple[tuple[int, str | int], ...]:
    # deepest and highest list index first, so deleting one entry never shifts another
    return tuple((0, p) if isinstance(p, int) else (1, p) for p in path)


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    return [key for key in instance if key not in known]


def unknown_key_problem(name: str, path: Path) -> Problem:
    """A warning for a key the schema does not know, with the closest valid key."""
    key = str(path[-1])
    parent = tuple(str(p) for p in path[:-1])
    text = f"unknown key `{key}` is ignored"
    suggestions = suggest(parent, key)
    if suggestions:
        text += "; did you mean " + " or ".join(f"`{s}`" for s in suggestions) + "?"
    return Problem("warning", name, text, key=dotted(path))


def suggest(parent: KeyPath, key: str) -> list[str]:
    """Closest valid keys: a sibling first, else the same name elsewhere in the schema."""
    node = schema_mod.subschema(parent) or {}
    siblings = [k for k in node.get("properties", {}) if k != "$schema"]
    close = _close(key, siblings)
    if close:
        return [dotted(parent + (close[0],))]
    everywhere = {dotted(path): path[-1] for path, _ in schema_mod.iter_keys()}
    names = sorted(set(everywhere.values()))
    close = _close(key, names)
    if not close:
        return []
    return sorted(full for full, last in everywhere.items() if last == close[0])[:2]


def _close(key: str, candidates: list[str]) -> list[str]:
    lowered = {c.lower(): c for c in candidates}
    found = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return [lowered[f] for f in found]


def _schema_problem(name: str, path: Path, error: jsonschema.ValidationError) -> Problem:
    expected = _expected(error)
    got = show_value(error.instance)
    if isinstance(path[-1], int):
        list_path = path[:-1]
        reason = expected if error.validator == "format" else f"expected {expected}"
        text = f"entry {path[-1] + 1} ({got}) is dropped: {reason}"
        return Problem("error", name, text, key=dotted(list_path), fallback=tuple(str(p) for p in list_path))
    text = f"expected {expected}, got {got}"
    if error.validator == "format":
        text = f"{got} is ignored: {expected}"
    return Problem("error", name, text, key=dotted(path), fallback=tuple(str(p) for p in path))


def _expected(error: jsonschema.ValidationError) -> str:
    rule = error.validator_value
    if error.validator == "type":
        kinds = rule if isinstance(rule, list) else [rule]
        return " or ".join(_TYPE_NAMES.get(str(k), str(k)) for k in kinds)
    if error.validator == "enum":
        return "one of " + ", ".join(show_value(v) for v in rule)
    if error.validator == "anyOf":
        return ", or ".join(_form(option) for option in rule)
    kind = "a whole number" if error.schema.get("type") == "integer" else "a number"
    if error.validator == "minimum":
        return f"{kind} of at least {rule}"
    if error.validator == "maximum":
        return f"{kind} of at most {rule}"
    if error.validator == "minLength":
        return "a non-empty string" if rule == 1 else f"a string of at least {rule} characters"
    if error.validator == "format":
        return str(error.cause) if error.cause else f"a valid {rule}"
    return str(error.message)


def _form(node: dict[str, Any]) -> str:
    """One accepted form of a value that may take several: `one of "warn", "auto"`, `a whole number (at least 1000)`."""
    if "enum" in node:
        return "one of " + ", ".join(show_value(v) for v in node["enum"])
    bounds = [
        f"{word} {node[key]}"
        for key, word in (
            ("minimum", "at least"),
            ("exclusiveMinimum", "above"),
            ("maximum", "at most"),
            ("exclusiveMaximum", "below"),
        )
        if key in node
    ]
    kind = _TYPE_NAMES.get(str(node.get("type")), str(node.get("type")))
    return f"{kind} ({', '.join(bounds)})" if bounds else kind


def remove_key_everywhere(data: Any, key: str) -> list[Path]:
    """Delete `key` from every object at any depth; the paths where it was found (iterative)."""
    found: list[Path] = []
    stack: list[tuple[Any, Path]] = [(data, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            if key in node:
                del node[key]
                found.append(path + [key])
            stack.extend((value, path + [k]) for k, value in node.items() if isinstance(value, (dict, list)))
        elif isinstance(node, list):
            stack.extend((value, path + [i]) for i, value in enumerate(node) if isinstance(value, (dict, list)))
    return sorted(found, key=lambda p: dotted(p))


def cut_deep(data: Any, limit: int) -> None:
    """Replace every container nested deeper than `limit` by a short marker string (iterative)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        entries: Iterator[tuple[Any, Any]] = iter(node.items()) if isinstance(node, dict) else enumerate(node)
        for key, value in list(entries):
            if isinstance(value, (dict, list)):
                if depth + 1 >= limit:
                    node[key] = TOO_DEEP
                else:
                    stack.append((value, depth + 1))


def _delete(data: Any, path: Path) -> None:
    node = data
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    try:
        del node[path[-1]]
    except (KeyError, IndexError, TypeError):
        pass
