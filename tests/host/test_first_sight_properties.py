"""A runtime that sees a session for the first time sends what a runtime that saw every request sends (hypothesis)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from dcp_plugin.store import Store

pytestmark = pytest.mark.slow  # every request of a session replayed from scratch: quadratic in its length

CONFIGS = {
    "default": DcpConfig(),
    "all strategies, turn protection": DcpConfig.model_validate(
        {"strategies": {"supersedeWrites": {"enabled": True}}, "turnProtection": {"enabled": True, "turns": 2}}
    ),
    # Masking from early on, so a short session holds many batches (and, in window mode, a mask per request).
    "early batches": DcpConfig.model_validate(
        {"strategies": {"maskOldOutputs": {"trigger": 15_000, "keepTokens": 4_000}}}
    ),
    "early window": DcpConfig.model_validate(
        {"strategies": {"maskOldOutputs": {"trigger": 15_000, "keepTokens": 4_000, "mode": "window"}}}
    ),
}


def request_points(messages: list[dict[str, Any]]) -> list[int]:
    """How many messages each request held: one before each assistant message, then the whole list."""
    return [i for i, m in enumerate(messages) if i and m["info"]["role"] == "assistant"] + [len(messages)]


def send(runtime: Runtime, messages: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """One request through the runtime: the (call id, field, value) of every placeholder it writes."""
    outgoing = runtime.prepare("s", messages)
    assert outgoing is not None
    runtime.finish(outgoing, messages)
    return sorted(((d.call_id, d.field, d.value) for d, _ in outgoing.patches), key=lambda p: p[:2])


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 10**6), st.integers(100, 200), st.booleans(), st.booleans(), st.sampled_from(list(CONFIGS)))
def test_at_every_request_a_first_sight_runtime_writes_what_the_live_runtime_writes(
    seed: int, size: int, busy: bool, lsp: bool, config_name: str
) -> None:
    config = CONFIGS[config_name]
    messages = generate_session(size, seed=seed, busy=busy, lsp=lsp)["messages"]
    with tempfile.TemporaryDirectory() as folder:
        # The store tells a first sight that the plugin pruned this session live: the provider's
        # counts in the history are of pruned requests, as they are for the live runtime.
        store = Store(Path(folder) / "dcp.sqlite3")
        live = Runtime(DEFAULT_DIRECTORY, config, store=store)
        for count in request_points(messages):
            sent = messages[:count]
            expected = send(live, sent)
            first_sight = Runtime(DEFAULT_DIRECTORY, config, store=Store(Path(folder) / "dcp.sqlite3"))
            assert send(first_sight, sent) == expected, f"request holding {count} messages"
