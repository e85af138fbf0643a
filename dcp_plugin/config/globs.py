"""Gitignore patterns made safe to match: star runs collapsed, a wildcard budget, case folding.

pathspec turns every `*` into a regex group; a path that almost matches makes Python's
regex engine try every way of splitting it between the groups. Measured with pathspec
1.1: `**********.lock` against a 22-character name took 1.6 s (it grows about 4x per
star), and `**/a/**/a/**/b` against a 4,096-character path 58 s. Runs of stars inside a
name mean one star in gitignore, so they are collapsed (same matches, one group); what
is left is bounded by the budget below and by the path limits in `protection`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import pathspec
from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern

# Wildcards a pattern may hold: each `*` inside a name, each `**` that is not last, and the
# implicit `**/` in front of a pattern without a slash. With at most 3, of which at most 2
# span directories, the worst path we match (1,024 characters, names of at most 255) costs
# a pattern 5-14 ms once; at 4,096 characters one more `**` took 58 s, one more `*` 99 s.
MAX_WILDCARDS = 3
MAX_DEEP_WILDCARDS = 2
# Patterns crossing directories twice (`**/a/**/b`) cost up to ~8 ms each on a new crafted path,
# every other allowed shape ~0.1 ms: with at most this many of them, a list of 1,000 patterns
# costs a new path at most ~0.2 s, once (verdicts are cached per path), instead of 7 s.
MAX_DEEP_PATTERNS = 8
# No path is longer (Linux's PATH_MAX), so a longer pattern matches nothing a tool names; checking
# and compiling one grows faster than its length (a 900,000-character pattern took 43 s).
MAX_PATTERN_CHARS = 4096


@dataclass(frozen=True)
class Shape:
    """What a pattern costs to match: its wildcards, and those that cross directories."""

    wildcards: int
    deep: int


def _bracket_end(segment: str, start: int) -> int:
    """Index just past the `]` closing the bracket expression opened before `start`, or -1.

    The same scan as pathspec's: a leading `!`/`^` and a `]` right after it are part of the set.
    """
    j = start
    if j < len(segment) and segment[j] in "!^":
        j += 1
    if j < len(segment) and segment[j] == "]":
        j += 1
    while j < len(segment) and segment[j] != "]":
        j += 1
    return j + 1 if j < len(segment) else -1


def _scan_name(segment: str) -> tuple[str, int]:
    """A name segment with its star runs collapsed, and how many stars (wildcards) it keeps."""
    out: list[str] = []
    stars = 0
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "\\":
            out.append(segment[i : i + 2])
            i += 2
        elif char == "[" and (end := _bracket_end(segment, i + 1)) != -1:
            out.append(segment[i:end])
            i = end
        elif char == "*":
            out.append("*")
            stars += 1
            while i < len(segment) and segment[i] == "*":
                i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out), stars


def _split(pattern: str) -> tuple[str, list[str]] | None:
    """The negation prefix and the segments of a pattern line, or None for a blank or comment."""
    if not pattern.endswith("\\ "):
        pattern = pattern.rstrip()
    if not pattern or pattern.startswith("#"):
        return None
    prefix = "!" if pattern.startswith("!") else ""
    return prefix, pattern[len(prefix) :].split("/")


def normalize(pattern: str) -> str:
    """The pattern with every run of stars collapsed the way gitignore reads it.

    Inside a name, `a***b` is `a*b`. A segment made only of stars is `**`, as git's own
    matcher (wildmatch) treats it; pathspec alone would read `***` as three name wildcards.
    """
    split = _split(pattern)
    if split is None or "**" not in pattern:
        return pattern
    prefix, segments = split
    out = [seg if seg == "" else "**" if not seg.strip("*") else _scan_name(seg)[0] for seg in segments]
    return prefix + "/".join(out)


def shape(pattern: str) -> Shape:
    """Count the wildcards of a normalized pattern the way pathspec compiles it."""
    split = _split(pattern)
    if split is None:
        return Shape(0, 0)
    _, segments = split
    if segments[0] == "":
        segments = segments[1:]  # anchored at the project root
    elif len(segments) == 1 or (len(segments) == 2 and segments[1] == ""):
        segments = ["**", *segments]  # no slash: matches at any depth
    if segments and segments[-1] == "":
        segments[-1] = "**"
    collapsed = [seg for i, seg in enumerate(segments) if not (seg == "**" and i and segments[i - 1] == "**")]
    deep = sum(1 for seg in collapsed[:-1] if seg == "**")
    names = sum(_scan_name(seg)[1] for seg in collapsed if seg != "**")
    return Shape(deep + names, deep)


def is_deep(pattern: str) -> bool:
    """Whether a pattern crosses directories as often as allowed: the costly shape."""
    # A pattern too long to use is never compiled, so it costs nothing to match (and is not scanned).
    return len(pattern) <= MAX_PATTERN_CHARS and shape(normalize(pattern)).deep >= MAX_DEEP_WILDCARDS


def within_deep_budget(patterns: list[str]) -> list[str]:
    """The patterns, without the costly ones past the first MAX_DEEP_PATTERNS."""
    kept: list[str] = []
    deep = 0
    for pattern in patterns:
        if isinstance(pattern, str) and is_deep(pattern):
            deep += 1
            if deep > MAX_DEEP_PATTERNS:
                continue
        kept.append(pattern)
    return kept


def budget_problem(pattern: str) -> str | None:
    """Why a (normalized) pattern has too many wildcards to match in bounded time, or None."""
    found = shape(pattern)
    if found.wildcards <= MAX_WILDCARDS and found.deep <= MAX_DEEP_WILDCARDS:
        return None
    return (
        f"it has too many wildcards to match quickly: {found.wildcards} `*`/`**`, {found.deep} of them crossing "
        "directories (a pattern without a slash counts an implied `**/` in front); the limit is "
        f"{MAX_WILDCARDS}, at most {MAX_DEEP_WILDCARDS} crossing directories"
    )


@functools.lru_cache(maxsize=2048)
def _compile(pattern: str, ignore_case: bool) -> GitIgnoreBasicPattern | str:
    """The compiled (normalized) pattern, or why it is unusable."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"it is {len(pattern):,} characters long; a pattern may have at most {MAX_PATTERN_CHARS:,}, as a path"
    normal = normalize(pattern)
    too_costly = budget_problem(normal)  # first: compiling 1,000 such patterns alone took 1.2 s
    if too_costly:
        return too_costly
    try:
        regex, include = GitIgnoreBasicPattern.pattern_to_regex(normal)
        if regex is None or include is None:
            return "it matches nothing (blank or a `#` comment)"
        # inline, not a flag: pathspec's other backends (re2) read the pattern's text
        compiled = re.compile(f"(?i){regex}" if ignore_case else regex)
    except Exception as exc:  # noqa: BLE001 - pathspec raises its own error, re.error and others
        detail = exc.msg if isinstance(exc, re.error) else str(exc)
        return f"it is not a valid gitignore pattern ({detail})"
    return GitIgnoreBasicPattern(compiled, include)


def pattern_problem(pattern: str) -> str | None:
    """Why a gitignore-style pattern is unusable, or None when it can be matched safely."""
    result = _compile(pattern, False)
    return result if isinstance(result, str) else None


def compile_spec(patterns: tuple[str, ...], ignore_case: bool) -> pathspec.PathSpec[GitIgnoreBasicPattern] | None:
    """A PathSpec of the usable patterns (normalized), None when none is left.

    Unusable patterns are left out: config validation reported them, and matching one
    could hang the host.
    """
    usable = within_deep_budget([p for p in patterns if isinstance(p, str)])
    compiled = [c for p in usable if not isinstance(c := _compile(p, ignore_case), str)]
    return pathspec.PathSpec(compiled) if compiled else None
