"""Check one parsed config layer against the schema and keep only the keys that are valid."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pathspec

from dcp_plugin.config import schema as schema_mod
from dcp_plugin.config.problems import SKIPPED, Problem, show_value
from dcp_plugin.config.schema import KeyPath, dotted

LEGACY_KEY = "contextPercentageThreshold"
LEGACY_TEXT = "was removed; thresholds are now computed internally"
# The schema is a few levels deep; anything deeper is junk and is cut off here so that
# no later step (jsonschema's messages, rendering) can hit the recursion limit.
MAX_DEPTH = 32
TOO_DEEP = "<nested too deeply>"

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


def pattern_problem(pattern: str) -> str | None:
    """Why a gitignore-style pattern is unusable, or None when pathspec accepts it."""
    try:
        spec = pathspec.PathSpec.from_lines("gitignore", [pattern])
    except Exception as exc:  # pathspec raises its own error, re.error and others
        detail = exc.msg if isinstance(exc, re.error) else str(exc)
        return f"it is not a valid gitignore pattern ({detail})"
    if not spec.patterns or all(p.include is None for p in spec.patterns):
        return "it matches nothing (blank or a `#` comment)"
    return None


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
    problems: list[Problem] = []
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
        return {}, problems + [Problem("error", name, f"is nested too deeply to check; {SKIPPED}")]
    removals: dict[tuple[str | int, ...], None] = {}
    for error in errors:
        path: Path = list(error.absolute_path)
        if error.validator == "additionalProperties":
            for key in _unknown_keys(error):
                removals.setdefault(tuple(path + [key]), None)
                problems.append(unknown_key_problem(name, [*path, key]))
            continue
        if tuple(path) in removals or not path:
            continue
        removals[tuple(path)] = None
        problems.append(_schema_problem(name, path, error))
    for path_key in sorted(removals, key=_sort_key, reverse=True):
        _delete(data, list(path_key))
    return data, problems


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
