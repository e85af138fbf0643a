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
import importlib.util
import re
from dataclasses import dataclass
from typing import Any

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
# Checking and compiling a pattern costs work linear in its length (about 150 Python steps per
# character, 7 µs at best: `re` parses and compiles in Python), so the characters of all patterns
# used are capped too: 1,000 patterns of 32 characters, or 8 at the length limit; a list of 250
# patterns of 4,000 characters took 7.5 s to read before. Patterns past the cap are dropped.
MAX_TOTAL_PATTERN_CHARS = 32_768


@dataclass(frozen=True)
class Shape:
    """What a pattern costs to match: its wildcards, and those that cross directories."""

    wildcards: int
    deep: int


def _next_closers(segment: str) -> list[int]:
    """For each index, the index of the first `]` at or after it (len(segment) when none).

    One backward pass, so finding where every bracket expression ends costs linear time: a
    scan per `[` made `"[" * 4000` cost 4,000 scans of the rest of the pattern (0.4 s in our
    scan and as much again in pathspec's, per pattern).
    """
    closers = [len(segment)] * (len(segment) + 1)
    for j in range(len(segment) - 1, -1, -1):
        closers[j] = j if segment[j] == "]" else closers[j + 1]
    return closers


def _bracket_end(segment: str, start: int, closers: list[int]) -> int:
    """Index just past the `]` closing the bracket expression opened before `start`, or -1.

    The same rule as pathspec's scan: a leading `!`/`^` and a `]` right after it are part of the set.
    """
    j = start
    if j < len(segment) and segment[j] in "!^":
        j += 1
    if j < len(segment) and segment[j] == "]":
        j += 1
    close = closers[j]
    return close + 1 if close < len(segment) else -1


@dataclass(frozen=True)
class Name:
    """A name segment as it is compiled: star runs collapsed, unclosed `[` escaped."""

    text: str
    stars: int  # wildcards it keeps
    unclosed: int  # `[` without a closing `]`, each now a literal `\[`


def _scan_name(segment: str) -> Name:
    """A name segment with its star runs collapsed and every unclosed `[` written as the literal it is.

    pathspec reads an unclosed `[` as a literal `[` too, but finds that out by scanning the
    rest of the segment for each one; escaped, it is a single step.
    """
    closers: list[int] | None = None
    out: list[str] = []
    stars = unclosed = 0
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "\\":
            out.append(segment[i : i + 2])
            i += 2
        elif char == "[":
            closers = closers or _next_closers(segment)
            end = _bracket_end(segment, i + 1, closers)
            if end == -1:
                out.append("\\[")
                unclosed += 1
                i += 1
            else:
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
    return Name("".join(out), stars, unclosed)


def _split(pattern: str) -> tuple[str, list[str]] | None:
    """The negation prefix and the segments of a pattern line, or None for a blank or comment."""
    if not pattern.endswith("\\ "):
        pattern = pattern.rstrip()
    if not pattern or pattern.startswith("#"):
        return None
    prefix = "!" if pattern.startswith("!") else ""
    return prefix, pattern[len(prefix) :].split("/")


@functools.lru_cache(maxsize=2048)
def normalize(pattern: str) -> str:
    """The pattern with every run of stars collapsed the way gitignore reads it, unclosed `[` escaped.

    Inside a name, `a***b` is `a*b`. A segment of two or more stars only is `**`, as git's
    own matcher (wildmatch) treats it; pathspec alone would read `***` as three name wildcards.
    """
    split = _split(pattern)
    if split is None or ("**" not in pattern and "[" not in pattern):
        return pattern
    prefix, segments = split
    out = [_normal_segment(seg) for seg in segments]
    return prefix + "/".join(out)


def _normal_segment(segment: str) -> str:
    if segment in ("", "*"):
        return segment
    return "**" if not segment.strip("*") else _scan_name(segment).text


def unclosed_brackets(pattern: str) -> int:
    """How many `[` of a pattern have no closing `]` (each matches a literal `[`)."""
    split = _split(pattern)
    if split is None or "[" not in pattern or len(pattern) > MAX_PATTERN_CHARS:
        return 0
    return sum(_scan_name(seg).unclosed for seg in split[1] if seg)


@functools.lru_cache(maxsize=2048)
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
    names = sum(_scan_name(seg).stars for seg in collapsed if seg != "**")
    return Shape(deep + names, deep)


def is_deep(pattern: str) -> bool:
    """Whether a pattern crosses directories as often as allowed: the costly shape."""
    # A pattern too long to use is never compiled, so it costs nothing to match (and is not scanned).
    return len(pattern) <= MAX_PATTERN_CHARS and shape(normalize(pattern)).deep >= MAX_DEEP_WILDCARDS


@dataclass(frozen=True)
class Budgeted:
    """The patterns kept within the budgets, and how many of each kind were dropped."""

    kept: list[Any]
    deep_dropped: int
    long_dropped: int


def within_budget(patterns: list[Any]) -> Budgeted:
    """The patterns without the costly ones past the first MAX_DEEP_PATTERNS, and without those past MAX_TOTAL_PATTERN_CHARS.

    A pattern refused before it is compiled (too long, too many wildcards) counts no characters;
    one that does not fit is dropped before it is even scanned.
    """
    kept: list[Any] = []
    deep = deep_dropped = long_dropped = chars = 0
    for pattern in patterns:
        if isinstance(pattern, str) and len(pattern) <= MAX_PATTERN_CHARS:
            if chars + len(pattern) > MAX_TOTAL_PATTERN_CHARS:
                long_dropped += 1
                continue
            if budget_problem(normalize(pattern)):
                kept.append(pattern)  # refused with its own message by validation, never compiled
                continue
            if is_deep(pattern):
                deep += 1
                if deep > MAX_DEEP_PATTERNS:
                    deep_dropped += 1
                    continue
            chars += len(pattern)
        kept.append(pattern)
    return Budgeted(kept, deep_dropped, long_dropped)


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


# Characters Python's `re` reads as the start of a future set operation when they appear inside
# a set (`[[`, `--`, `&&`, `~~`, `||`): it warns (FutureWarning, once per pattern, into the
# host's log). Escaped, each is the plain character it is today.
_SET_OPERATORS = frozenset("[]-&~|^")


def quiet_sets(regex: str) -> str:
    """The regex with every set member Python might one day read as set syntax escaped (same matches)."""
    if "[" not in regex:
        return regex
    out: list[str] = []
    i, n = 0, len(regex)
    while i < n:
        char = regex[i]
        if char == "\\":
            out.append(regex[i : i + 2])
            i += 2
        elif char == "[":
            i = _quiet_set(regex, i, out)
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _quiet_set(regex: str, start: int, out: list[str]) -> int:
    """Copy the set opened at ``start`` with its members escaped, read as `re` reads it; the index after it."""
    i, n = start + 1, len(regex)
    text = ["["]
    if i < n and regex[i] == "^":
        text.append("^")
        i += 1
    members = 0
    while i < n:
        if regex[i] == "]" and members:
            out.append("".join(text) + "]")
            return i + 1
        low, i = _member(regex, i)
        if i + 1 < n and regex[i] == "-" and regex[i + 1] != "]":
            high, i = _member(regex, i + 1)
            text.append(f"{low}-{high}")
        else:
            text.append(low)
        members += 1
    out.append(regex[start:])  # unterminated: left as it is, for re.compile to report
    return n


def _member(regex: str, i: int) -> tuple[str, int]:
    """One set member at ``i`` (an escape pair or a character, escaped when it could be set syntax), and the index after it."""
    if regex[i] == "\\":
        return regex[i : i + 2], i + 2
    char = regex[i]
    return (f"\\{char}" if char in _SET_OPERATORS else char), i + 1


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
        regex = quiet_sets(regex)
        compiled = re.compile(f"(?i){regex}" if ignore_case else regex)
    except Exception as exc:  # noqa: BLE001 - pathspec raises its own error, re.error and others
        detail = exc.msg if isinstance(exc, re.error) else str(exc)
        return f"it is not a valid gitignore pattern ({detail})"
    return GitIgnoreBasicPattern(compiled, include)


def pattern_problem(pattern: str) -> str | None:
    """Why a gitignore-style pattern is unusable, or None when it can be matched safely."""
    result = _compile(pattern, False)
    return result if isinstance(result, str) else None


class PatternSet:
    """The usable patterns of one config, matched as one RE2 set when google-re2 is installed.

    RE2 matches in time linear in the path whatever the patterns (no backtracking): 1,000
    patterns like `**/*a*b1` took 243 ms on a crafted 255-character name with Python's `re`,
    one by one, and 0.7 ms as a set. Python's `re` still answers for a path RE2 cannot take (a
    lone surrogate cannot be encoded) and when RE2 is missing or refuses a pattern.
    """

    def __init__(self, patterns: list[GitIgnoreBasicPattern]) -> None:
        self.patterns = patterns
        self._python = pathspec.PathSpec(patterns, backend="simple")
        self._re2 = _re2_spec(patterns)

    @property
    def uses_re2(self) -> bool:
        """Whether the patterns are matched as one RE2 set."""
        return self._re2 is not None

    def match_file(self, path: str) -> bool:
        """Whether the last pattern that matches ``path`` includes it (gitignore's rule)."""
        if self._re2 is not None:
            try:
                return self._re2.match_file(path)
            except Exception:  # noqa: BLE001, S110 - a path RE2 cannot encode; Python's `re` answers
                pass
        return self._python.match_file(path)


def _re2_spec(patterns: list[GitIgnoreBasicPattern]) -> pathspec.PathSpec[GitIgnoreBasicPattern] | None:
    if importlib.util.find_spec("re2") is None:
        return None
    try:
        return pathspec.PathSpec(patterns, backend="re2")
    except Exception:  # noqa: BLE001 - RE2 refuses some regex Python accepts: Python's `re` then matches them all
        return None


def compile_spec(patterns: tuple[str, ...], ignore_case: bool) -> PatternSet | None:
    """The usable patterns (normalized), compiled into one set; None when none is left.

    Unusable patterns are left out: config validation reported them, and matching one
    could hang the host.
    """
    usable = within_budget([p for p in patterns if isinstance(p, str)]).kept
    compiled = [c for p in usable if not isinstance(c := _compile(p, ignore_case), str)]
    return PatternSet(compiled) if compiled else None
