"""Config problems: what is wrong, where, and the wording the user sees."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dcp_plugin.config.schema import KeyPath, dotted
from dcp_plugin.printable import escape

Level = Literal["error", "warning"]

SKIPPED = "the whole file is skipped; its settings come from the other config files and the defaults"
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

    def location(self) -> str:
        """`file:line:col`, `file: key.path` or just `file`."""
        if self.line is not None:
            where = f"{self.file}:{self.line}"
            return where + (f":{self.column}" if self.column is not None else "")
        if self.key is not None:
            return f"{self.file}: {self.key}"
        return self.file

    def render(self, effective: Mapping[str, Any] | None = None, origins: Mapping[str, str] | None = None) -> str:
        """The message shown to the user; with the effective config it says what value is used instead."""
        message = f"dcp: {self.location()}: {self.level}: {self.text}"
        if self.fallback is not None and effective is not None:
            found, value = lookup(effective, self.fallback)
            if found:
                origin = (origins or {}).get(dotted(self.fallback), DEFAULT_ORIGIN)
                source = "the default" if origin == DEFAULT_ORIGIN else f"from {origin}"
                message += f"; using {show_value(value)} ({source})"
        # keys and file names come from the user's files: no raw control character or lone
        # surrogate may reach a terminal (or crash printing, as a surrogate does)
        return escape(message)


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
