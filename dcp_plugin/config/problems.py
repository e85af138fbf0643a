"""Config problems: what is wrong, where, and the wording the user sees."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dcp_plugin.config.schema import KeyPath, dotted
from dcp_plugin.printable import escape, plural

Level = Literal["error", "warning"]

# What becomes of a file that cannot be used, in the host and in the `dcp` commands alike: the host
# keeps the version it last read whole (config/lastgood.py); before any, and in a command (which has
# read no earlier version), that is nothing, so the other files and the defaults apply.
UNUSABLE = (
    "the file is not used until it is fixed: its last good version stays in force, or where there is none "
    "(a first read, the dcp commands) the other config files and the defaults"
)
# A summary toast lists at most this many problems; `dcp config validate` prints them all.
SUMMARY_LIMIT = 10
DEFAULT_ORIGIN = "default"


@dataclass(frozen=True)
class Problem:
    """One problem in one config file; `fallback` names the key whose effective value replaces it."""

    level: Level
    file: str
    text: str
    key: str | None = None
    line: int | None = None
    column: int | None = None
    fallback: KeyPath | None = None

    def location(self, *, with_file: bool = True) -> str:
        """`file:line:col`, `file: key.path` or just `file` (without the file: `line 3:5`, `key.path` or ``)."""
        if self.line is not None:
            where = f"{self.file}:{self.line}" if with_file else f"line {self.line}"
            return where + (f":{self.column}" if self.column is not None else "")
        if self.key is not None:
            return f"{self.file}: {self.key}" if with_file else self.key
        return self.file if with_file else ""

    def render(
        self, effective: Mapping[str, Any] | None = None, origins: Mapping[str, str] | None = None, *, alone: bool = True
    ) -> str:
        """The message shown to the user; with the effective config it says what value is used instead.

        Not ``alone``: one line of a summary that names the file above it (see `summary`).
        """
        where = self.location(with_file=alone)
        message = f"dcp: {where}: {self.level}: {self.text}" if alone else f"{where + ': ' if where else ''}{self.level}: {self.text}"
        if self.fallback is not None and effective is not None:
            found, value = lookup(effective, self.fallback)
            if found:
                origin = (origins or {}).get(dotted(self.fallback), DEFAULT_ORIGIN)
                source = "the default" if origin == DEFAULT_ORIGIN else f"from {origin}"
                message += f"; using {show_value(value)} ({source})"
        # keys and file names come from the user's files: no raw control character or lone
        # surrogate may reach a terminal (or crash printing, as a surrogate does)
        return escape(message)


def summary(
    problems: Sequence[Problem], effective: Mapping[str, Any] | None = None, origins: Mapping[str, str] | None = None
) -> str | None:
    """All of ``problems`` as one message, errors first, naming the files; None when there are none.

    Problems found together are shown together: one toast each, shown in the same millisecond, would
    leave only the last one visible.
    """
    if not problems:
        return None
    ordered = sorted(problems, key=lambda p: p.level != "error")  # stable: file order within a level
    if len(ordered) == 1:
        return ordered[0].render(effective, origins)
    errors = sum(1 for p in ordered if p.level == "error")
    counts = ", ".join(
        part for part in (errors and plural(errors, "error"), len(ordered) - errors and plural(len(ordered) - errors, "warning")) if part
    )
    files = list(dict.fromkeys(p.file for p in ordered))
    lines = [escape(f"dcp: {plural(len(ordered), 'config problem')} ({counts}) in {', '.join(files)}:")]
    # One file: named once above; several: each line names its own.
    lines += [f"- {p.render(effective, origins, alone=len(files) > 1).removeprefix('dcp: ')}" for p in ordered[:SUMMARY_LIMIT]]
    if len(ordered) > SUMMARY_LIMIT:
        lines.append(f"- and {plural(len(ordered) - SUMMARY_LIMIT, 'more problem')}: `dcp config validate` lists them all")
    return "\n".join(lines)


def lookup(data: Mapping[str, Any], path: KeyPath) -> tuple[bool, Any]:
    """The value at a key path of nested dicts, and whether it exists."""
    node: Any = data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False, None
        node = node[key]
    return True, node


def show_value(value: Any, limit: int = 80) -> str:
    """A short JSON-like rendering of any parsed value, safe on huge or deeply nested input."""
    text = _render(value, depth=0, budget=[limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render(value: Any, depth: int, budget: list[int]) -> str:
    # budget stops the walk early so a 1 MiB list costs as little as a short one
    if budget[0] <= 0:
        return "…"
    if isinstance(value, dict):
        if depth >= 3:
            text = "{…}"
        else:
            items = []
            for key, item in value.items():
                if budget[0] <= 0:
                    items.append("…")
                    break
                items.append(f"{json.dumps(str(key))}: {_render(item, depth + 1, budget)}")
            text = "{" + ", ".join(items) + "}"
    elif isinstance(value, (list, tuple)):
        if depth >= 3:
            text = "[…]" if value else "[]"
        else:
            parts = []
            for item in value:
                if budget[0] <= 0:
                    parts.append("…")
                    break
                parts.append(_render(item, depth + 1, budget))
            text = "[" + ", ".join(parts) + "]"
    elif isinstance(value, float) and not math.isfinite(value):
        text = str(value)
    elif isinstance(value, str):
        text = json.dumps(value[:200], ensure_ascii=False)
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            text = repr(value)[:200]
    budget[0] -= len(text)
    return text
