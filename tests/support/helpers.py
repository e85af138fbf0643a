"""Builders of host-shaped messages for tests."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
from typing import Any

from dcp_plugin.adapters.pluggy_host import DcpPlugin
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.messages import call_id_of
from dcp_plugin.pipeline.placeholders import placeholder_for

_ids = itertools.count(1)
SESSION = "ses_test"
PROJECT = "/home/dev/project"


# Tests of *what* is pruned write every decision at once (the documented `cache.scheduler: false`);
# tests of *when* it is written turn the scheduler back on.
IMMEDIATE: dict[str, Any] = {"cache": {"scheduler": False}}


def make_config(**overrides: Any) -> DcpConfig:
    """A config from camelCase overrides; the cache scheduler is off unless ``cache`` says otherwise."""
    return DcpConfig.model_validate({**IMMEDIATE, **overrides})


def hook_transform(runtime: Runtime, input: Any, output: Any) -> None:
    """The chat_messages_transform hook of a plugin over ``runtime``, as a pluggy host calls it."""
    DcpPlugin(runtime).chat_messages_transform(input, output)


def hook_command(runtime: Runtime, input: Any, output: Any) -> None:
    """The command_execute_before hook of a plugin over ``runtime``, as a pluggy host calls it."""
    DcpPlugin(runtime).command_execute_before(input, output)


def user(text: str = "do it", session: str = SESSION) -> dict[str, Any]:
    mid = f"msg_{next(_ids):06d}"
    return {
        "info": {"id": mid, "sessionID": session, "role": "user"},
        "parts": [{"id": f"prt_{next(_ids):06d}", "sessionID": session, "messageID": mid, "type": "text", "text": text}],
    }


def tool_part(tool: str, tool_input: dict[str, Any], status: str = "completed", output: str = "x" * 400,
              error: str = "it failed", call_id: str | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status, "input": tool_input}
    if status == "completed":
        state.update(output=output, title=tool, metadata={}, time={"start": 1, "end": 2})
    elif status == "error":
        state.update(error=error, time={"start": 1, "end": 2})
    return {
        "id": f"prt_{next(_ids):06d}",
        "type": "tool",
        "tool": tool,
        "callID": call_id or f"call_{next(_ids):06d}",
        "state": state,
    }


def assistant(*parts: dict[str, Any], session: str = SESSION) -> dict[str, Any]:
    mid = f"msg_{next(_ids):06d}"
    for part in parts:
        part.setdefault("sessionID", session)
        part["messageID"] = mid
    return {"info": {"id": mid, "sessionID": session, "role": "assistant"}, "parts": list(parts)}


def call(tool: str, tool_input: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """An assistant message with a single tool call."""
    return assistant(tool_part(tool, tool_input, **kw))


def tool_parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for m in messages for p in m["parts"] if p.get("type") == "tool"]


def call_id(target: str | dict[str, Any]) -> str:
    """The call id of a tool part, of the only tool call of a message, or the id itself (as the ledger reads it)."""
    if isinstance(target, str):
        return target
    message = target if "parts" in target else {}
    parts = tool_parts([target]) if "parts" in target else [target]
    assert len(parts) == 1, f"expected one tool call, found {len(parts)}"
    return call_id_of(parts[0], message, 0, 0)


def named(placeholder: str, target: str | dict[str, Any]) -> str:
    """``placeholder`` as written for a call (a call id, its tool part, or a message with that one call)."""
    return placeholder_for(placeholder, call_id(target))


def run_bounded(code: str, seconds: float = 60) -> str:
    """Run `code` in a fresh interpreter and return its stdout; a hang or a blow-up fails the test
    (subprocess timeout) instead of stalling the suite."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=seconds, check=True
    )
    return result.stdout.strip()


def diagnostics(file: str, *errors: str, header: str = "this file, please fix") -> str:
    """A diagnostics block as OpenCode 1.18 appends it to a write, edit or apply_patch result."""
    lines = "\n".join(errors)
    return f"\n\nLSP errors detected in {header}:\n<diagnostics file=\"{file}\">\n{lines}\n</diagnostics>"
