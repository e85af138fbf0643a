"""What every importer shares: JSON lines with their line numbers, timestamps, and usage in OpenCode's shape."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from dcp_plugin.model.jsontext import NumberTooLong, loads
from dcp_plugin.replay.file_error import SessionFileError

Record = tuple[int, dict[str, Any]]  # (line number, the parsed object)


def json_lines(text: str, where: str) -> list[Record]:
    """The objects of a JSON-lines text with their line numbers; a bad line raises naming it.

    A last line that is cut off (no newline after it: the agent was still writing) is skipped.
    """
    records: list[Record] = []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = loads(line)
        except NumberTooLong as exc:
            raise SessionFileError(f"{where}:{number}:{exc.column}: {exc}; no session holds one") from None
        except (json.JSONDecodeError, RecursionError) as exc:
            if number == len(lines) and not text.endswith("\n"):
                break
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise SessionFileError(f"{where}:{number}: not valid JSON ({message})") from None
        if not isinstance(value, dict):
            raise SessionFileError(f"{where}:{number}: expected a JSON object per line, got {type(value).__name__}")
        records.append((number, value))
    return records


def millis(stamp: Any) -> int | None:
    """An RFC 3339 timestamp (``2025-06-01T10:00:00.123Z``) as epoch milliseconds; None when it is not one."""
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def tokens(input: int, output: int, reasoning: int, cache_read: int, cache_write: int) -> dict[str, Any]:
    """OpenCode's ``info.tokens``: ``input`` excludes cached tokens, ``output`` excludes reasoning."""
    return {
        "total": input + output + reasoning + cache_read + cache_write,
        "input": input,
        "output": output,
        "reasoning": reasoning,
        "cache": {"read": cache_read, "write": cache_write},
    }


def anthropic_tokens(usage: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic usage (input excludes the cache; thinking is inside output) as ``info.tokens``."""
    return tokens(
        _count(usage.get("input_tokens")),
        _count(usage.get("output_tokens")),
        0,
        _count(usage.get("cache_read_input_tokens")),
        _count(usage.get("cache_creation_input_tokens")),
    )


def openai_tokens(usage: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI usage (input includes cached tokens, output includes reasoning) as ``info.tokens``."""
    cached = _count(usage.get("cached_input_tokens"))
    reasoning = _count(usage.get("reasoning_output_tokens"))
    return tokens(
        max(0, _count(usage.get("input_tokens")) - cached),
        max(0, _count(usage.get("output_tokens")) - reasoning),
        reasoning,
        cached,
        0,
    )


def fill_turn_models(messages: list[dict[str, Any]]) -> None:
    """Give each user message the model its turn went to (``info.model``), as OpenCode records it."""
    upcoming: dict[str, str] | None = None
    for message in reversed(messages):
        info = message["info"]
        if info.get("role") == "assistant" and isinstance(info.get("modelID"), str):
            upcoming = {"providerID": str(info.get("providerID") or ""), "modelID": info["modelID"]}
        elif info.get("role") == "user" and upcoming is not None:
            info["model"] = dict(upcoming)
