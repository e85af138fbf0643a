"""A deliberately naive, from-scratch implementation of the strategy semantics, for comparison."""

from __future__ import annotations

import json
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.protection import PathProtector, absolute_path, extract_paths


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def reference_decisions(messages: list[dict[str, Any]], config: DcpConfig, directory: str) -> dict[str, str]:
    """call id -> strategy, computed by looking at the whole history at once."""
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
                    "turn": turn,
                }
            )
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
        protected = config.dedup_protected()
        for i, call in enumerate(calls):
            if call["status"] != "completed" or call["tool"] in protected or path_protected(call):
                continue
            key = json.dumps([call["tool"], _canonical(call["input"])], sort_keys=True)
            newer = any(
                c["status"] == "completed" and json.dumps([c["tool"], _canonical(c["input"])], sort_keys=True) == key
                for c in calls[i + 1 :]
            )
            if newer and old_enough(call):
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
            if read_later and old_enough(call):
                decisions.setdefault(call["id"], "supersedeWrites")
    if s.purge_errors.enabled:
        protected = config.purge_protected()
        for call in calls:
            if call["status"] != "error" or call["tool"] in protected or path_protected(call):
                continue
            if current - call["turn"] >= s.purge_errors.turns and old_enough(call):
                decisions.setdefault(call["id"], "purgeErrors")
    return decisions
