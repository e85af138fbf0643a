"""The plugin's own text in each request: its system text, its tool definitions and the prunable lists it appends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mypy_extensions import mypyc_attr

from dcp_plugin.model.tokens import estimate_json_tokens, estimate_text_tokens


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class PluginText:
    """Estimated tokens the plugin itself adds to every request (what offering the model its tools costs)."""

    system: int = 0
    tools: int = 0
    lists: int = 0

    @property
    def total(self) -> int:
        return self.system + self.tools + self.lists

    def to_dict(self) -> dict[str, int]:
        return {"system_text": self.system, "tool_definitions": self.tools, "prunable_lists": self.lists}


def plugin_text(system_text: str | None, definitions: list[dict[str, Any]], lists: int = 0) -> PluginText:
    """The estimate for a system text and tool definitions as offered, and ``lists`` tokens of prunable lists."""
    return PluginText(
        estimate_text_tokens(system_text) if system_text else 0,
        estimate_json_tokens(definitions) if definitions else 0,
        max(0, lists),
    )


def plugin_text_line(text: PluginText) -> str | None:
    """The line naming the plugin's own text; None when it adds nothing (its tools are not offered)."""
    if not text.total:
        return None
    lists = f", ~{text.lists:,} of prunable lists" if text.lists else ""
    return (
        f"The plugin's own text in every request: ~{text.system:,} tokens of system text, ~{text.tools:,} of "
        f"tool definitions (discard, extract, restore){lists}. It is what offering those tools costs, not pruning: "
        "the lists are in the net cost, the system text and tool definitions come on top of it."
    )
