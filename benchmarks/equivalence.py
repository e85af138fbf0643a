"""Decisions of the incremental path (one request per new message) and of a from-scratch run."""

from __future__ import annotations

from typing import Any

from benchmarks.harness import BenchHost
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.session import SessionState

Decision = tuple[str | None, str | None, Any]


def decision_map(state: SessionState) -> dict[str, Decision]:
    """call id -> (reason, replaced field, placeholder value) of every decided call."""
    return {r.call_id: (r.reason, r.field, r.value) for r in state.decided}


def reasons(decisions: dict[str, Decision]) -> dict[str, str]:
    """call id -> reason, the shape of the reference implementation's answer."""
    return {call_id: d[0] or "" for call_id, d in decisions.items()}


def from_scratch(messages: list[dict[str, Any]], directory: str, config: DcpConfig) -> SessionState:
    """The state after one request carrying the whole history to a fresh session."""
    state = SessionState("scratch", config, directory)
    state.update(messages)
    return state


def incremental(
    messages: list[dict[str, Any]], directory: str, config: DcpConfig, start: int = 1
) -> dict[str, Decision]:
    """Decisions after one request per message through the hook, from ``start`` messages to all of them."""
    host = BenchHost(messages, directory, config, "bench-incremental")
    try:
        host.forget()
        for count in range(max(1, start), len(messages) + 1):
            host.request(count)
        state = host.state()
        return decision_map(state) if state is not None else {}
    finally:
        host.close()
