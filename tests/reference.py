"""A deliberately naive, from-scratch implementation of the strategy semantics, for comparison."""

from __future__ import annotations

import json
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.ids import SHORT, short_id
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, FAILED_INPUT_PLACEHOLDER, SUPERSEDED_PLACEHOLDER
from dcp_plugin.pipeline.protection import HARDCODED_PROTECTED_TOOLS, PATH_KEYS, PathProtector, absolute_path, extract_paths


def _tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return -(-len(text) // 2)


def _shrunk(value: Any, placeholder: str, keep: tuple[str, ...] = (), top: bool = True) -> Any:
    if isinstance(value, str):
        return placeholder if len(value) > len(placeholder) else value
    if isinstance(value, dict):
        return {k: v if (top and k in keep) else _shrunk(v, placeholder, (), False) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrunk(v, placeholder, (), False) for v in value]
    return value


def _named(placeholder: str, ident: str) -> str:
    """The placeholder as written for the call with this id: the id before its closing bracket."""
    return placeholder[:-1] + f" (id {ident})]"


def _output_shrinks(call: dict[str, Any]) -> bool:
    output = call["output"]
    return output is not None and not call["compacted"] and _tokens(output) > _tokens(_named(DUPLICATE_PLACEHOLDER, call["ident"]))


def _input_shrinks(call: dict[str, Any], placeholder: str, keep: tuple[str, ...] = ()) -> bool:
    tool_input = call["input"]
    shrunk = _shrunk(tool_input, _named(placeholder, call["ident"]), keep)
    return isinstance(tool_input, dict) and _tokens(tool_input) > _tokens(shrunk)


def _idents(call_ids: list[str]) -> list[str]:
    """Each call's id: the shortest prefix of its digest no earlier call of the session took."""
    taken: set[str] = set()
    out = []
    for call_id in call_ids:
        length = SHORT
        while short_id(call_id, length) in taken:
            length += 1
        taken.add(short_id(call_id, length))
        out.append(short_id(call_id, length))
    return out


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def reference_decisions(messages: list[dict[str, Any]], config: DcpConfig, directory: str) -> dict[str, str]:
    """call id -> strategy, computed by looking at the whole history at once.

    A call is listed only when its placeholder removes at least one estimated token.
    """
    calls: list[dict[str, Any]] = []
    seen: set[str] = set()
    turn = 0
    for mi, message in enumerate(messages):
        if message["info"].get("role") == "user":
            turn += 1
        for pi, part in enumerate(message["parts"]):
            if part.get("type") != "tool":
                continue
            call_id = part.get("callID") or part.get("id") or f"{message['info'].get('id') or mi}#{pi}"
            if call_id in seen:
                continue
            seen.add(call_id)
            state = part["state"]
            calls.append(
                {
                    "id": call_id,
                    "tool": part["tool"],
                    "status": state.get("status"),
                    "input": state.get("input"),
                    "output": state.get("output"),
                    "compacted": bool((state.get("time") or {}).get("compacted")) if isinstance(state.get("time"), dict) else False,
                    "turn": turn,
                }
            )
    for call, ident in zip(calls, _idents([c["id"] for c in calls])):
        call["ident"] = ident
    current = turn
    protector = PathProtector(config.protected_file_patterns, directory)

    def path_protected(call: dict[str, Any]) -> bool:
        return protector.is_protected(extract_paths(call["tool"], call["input"]))

    def old_enough(call: dict[str, Any]) -> bool:
        tp = config.turn_protection
        return not tp.enabled or current - call["turn"] >= tp.turns

    decisions: dict[str, str] = {}
    s = config.strategies
    if s.deduplication.enabled:
        protected = HARDCODED_PROTECTED_TOOLS | set(s.deduplication.protected_tools)
        for i, call in enumerate(calls):
            if call["status"] != "completed" or call["tool"] in protected or path_protected(call):
                continue
            key = json.dumps([call["tool"], _canonical(call["input"])], sort_keys=True)
            newer = any(
                c["status"] == "completed" and json.dumps([c["tool"], _canonical(c["input"])], sort_keys=True) == key
                for c in calls[i + 1 :]
            )
            if newer and old_enough(call) and _output_shrinks(call):
                decisions.setdefault(call["id"], "deduplication")
    if s.supersede_writes.enabled:
        for i, call in enumerate(calls):
            if call["status"] != "completed" or call["tool"] != "write" or path_protected(call):
                continue
            paths = extract_paths("write", call["input"])
            if not paths:
                continue
            target = absolute_path(paths[0], directory)
            read_later = any(
                c["status"] == "completed"
                and c["tool"] == "read"
                and (p := extract_paths("read", c["input"]))
                and absolute_path(p[0], directory) == target
                for c in calls[i + 1 :]
            )
            if read_later and old_enough(call) and _input_shrinks(call, SUPERSEDED_PLACEHOLDER, PATH_KEYS):
                decisions.setdefault(call["id"], "supersedeWrites")
    if s.purge_errors.enabled:
        protected = HARDCODED_PROTECTED_TOOLS | set(s.purge_errors.protected_tools)
        for call in calls:
            if call["status"] != "error" or call["tool"] in protected or path_protected(call):
                continue
            old = current - call["turn"] >= s.purge_errors.turns
            if old and old_enough(call) and _input_shrinks(call, FAILED_INPUT_PLACEHOLDER):
                decisions.setdefault(call["id"], "purgeErrors")
    return decisions
