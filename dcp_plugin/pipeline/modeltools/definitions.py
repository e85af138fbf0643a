"""The tools the model prunes with, as the host offers them: names, descriptions, parameters and the system text."""

from __future__ import annotations

import copy
from typing import Any

from dcp_plugin.config.model import ToolsConfig
from dcp_plugin.pipeline.strategies import DISCARD as DISCARD
from dcp_plugin.pipeline.strategies import EXTRACT as EXTRACT

RESTORE = "restore"
NAMES: tuple[str, ...] = (DISCARD, EXTRACT, RESTORE)
PRUNING_TOOLS: frozenset[str] = frozenset({DISCARD, EXTRACT})
REASONS: tuple[str, ...] = ("noise", "done")

_IDS = {
    "type": "array",
    "items": {"type": "string"},
    "description": 'Ids of tool outputs, as placeholders and the list of prunable outputs name them, e.g. ["3kq7", "8mzp"].',
}

_DEFINITIONS: dict[str, dict[str, Any]] = {
    DISCARD: {
        "name": DISCARD,
        "description": (
            "Remove tool outputs you will not need again from the conversation. Each is replaced by a short "
            "placeholder that keeps its id, so restore can bring it back. Name them by the ids in placeholders "
            "and in the list of prunable outputs. One call for everything you want gone, not one call per output."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "ids": _IDS,
                "reason": {
                    "type": "string",
                    "enum": list(REASONS),
                    "description": "noise: the output was never useful; done: the task that needed it is finished.",
                },
            },
            "required": ["ids", "reason"],
        },
    },
    EXTRACT: {
        "name": EXTRACT,
        "description": (
            "Like discard, but keep what matters: for each output, write the facts worth keeping (paths, names, "
            "numbers, the lines of a log that matter). Your distillation replaces the output and is never removed "
            "automatically. Keep each one much shorter than the output it replaces."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "ids": _IDS,
                "distillation": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "One entry per id, in the same order: the facts to keep of that output.",
                },
            },
            "required": ["ids", "distillation"],
        },
    },
    RESTORE: {
        "name": RESTORE,
        "description": (
            "Get back the original content of pruned tool outputs (placeholders that name an id, whether you or the "
            "plugin pruned them) as this tool's result. The placeholders stay where they are. A long one "
            "comes in parts (part: from 1)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "ids": _IDS,
                "part": {"type": "integer"},
            },
            "required": ["ids"],
        },
    },
}

_SYSTEM_HEAD = (
    "[dcp: instructions] Context pruning (the dcp plugin) keeps this conversation small. Text in [dcp: ...] "
    "brackets is written by the plugin, never by the user. Each tool output that can be pruned has a short id: "
    'placeholders name it as "(id 3kq7)", and now and then a list of prunable outputs, with their ids and sizes, '
    "is appended to a tool result."
)
_SYSTEM_LINES = {
    DISCARD: "- discard(ids, reason): remove outputs you will not need again (noise: never useful; done: the task that needed them is finished).",
    EXTRACT: "- extract(ids, distillation): the same, keeping for each output the facts worth keeping.",
    RESTORE: "- restore(ids): get the original content of pruned outputs back, as that call's result.",
}
_SYSTEM_TAIL = (
    "Prune only what you are sure you will not need, in one call rather than many; after a prune the tools pause "
    "for a few steps. Pruning serves the user's task and never replaces it."
)


def enabled_tools(config: ToolsConfig) -> tuple[str, ...]:
    """The names of the tools ``config`` turns on, in a fixed order."""
    return tuple(name for name in NAMES if config.enabled(name))


def definitions(config: ToolsConfig) -> list[dict[str, Any]]:
    """``{name, description, parameters}`` (a JSON Schema object) of every tool ``config`` turns on."""
    return [copy.deepcopy(_DEFINITIONS[name]) for name in enabled_tools(config)]


def system_text(config: ToolsConfig) -> str | None:
    """What the plugin adds to the system prompt when it offers tools; the same text on every request."""
    names = enabled_tools(config)
    if not names:
        return None
    return "\n".join([_SYSTEM_HEAD, *(_SYSTEM_LINES[name] for name in names), _SYSTEM_TAIL])

